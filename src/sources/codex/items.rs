//! Codex 0.15x's `event_msg` / `item_completed` lines: a turn item as Codex's app server
//! completes it (`codex-rs/protocol/src/items.rs`, `TurnItem`, tagged by `type`). Newer
//! rollouts write a prompt only this way, and say here that a call failed. The other items
//! repeat what the `response_item`s say.

use crate::sources::images;
use crate::transcript::event::Attachment;
use serde_json::Value;

/// What a completed item tells the fold.
#[derive(Debug, PartialEq)]
pub(super) enum Completed {
    /// A user message: the prompt's text and its images.
    Prompt {
        text: String,
        attachments: Vec<Attachment>,
    },
    /// A call that failed: its status says so, or its exit code is not zero.
    Failed(String),
    /// Anything else: said again elsewhere in the rollout.
    Other,
}

/// `UserMessage`, `user_message` and `userMessage` are one name.
fn is(kind: &str, name: &str) -> bool {
    let plain = |s: &str| -> String {
        s.chars()
            .filter(|c| *c != '_')
            .flat_map(char::to_lowercase)
            .collect()
    };
    plain(kind) == plain(name)
}

fn field<'v>(v: &'v Value, names: &[&str]) -> Option<&'v Value> {
    names.iter().find_map(|n| v.get(*n))
}

/// The item of an `item_completed` payload, read.
pub(super) fn completed(item: &Value) -> Completed {
    let kind = item.get("type").and_then(Value::as_str).unwrap_or("");
    if is(kind, "UserMessage") {
        return prompt(item.get("content"));
    }
    let status = item.get("status").and_then(Value::as_str).unwrap_or("");
    let code = field(item, &["exitCode", "exit_code"]).and_then(Value::as_i64);
    let failed = is(status, "failed")
        || is(status, "declined")
        || code.is_some_and(|c| c != 0)
        || item.get("success").and_then(Value::as_bool) == Some(false);
    let id = field(item, &["call_id", "callId", "id"]).and_then(Value::as_str);
    match (failed, id) {
        (true, Some(id)) => Completed::Failed(id.to_owned()),
        _ => Completed::Other,
    }
}

/// A user message's inputs: its texts joined (as Codex's own `message()` joins them), its
/// images as attachments, and an image-only prompt named by its images.
fn prompt(content: Option<&Value>) -> Completed {
    let mut text = String::new();
    let mut attachments = Vec::new();
    for input in content.and_then(Value::as_array).into_iter().flatten() {
        let str_of = |k: &str| input.get(k).and_then(Value::as_str);
        match str_of("type").unwrap_or("") {
            "text" => text.push_str(str_of("text").unwrap_or("")),
            "image" => {
                let (mime, bytes) = str_of("image_url")
                    .and_then(images::data_uri)
                    .unwrap_or((None, 0));
                attachments.push(Attachment::sized(mime, bytes));
            }
            "local_image" => {
                let mut a = Attachment::sized(None, 0);
                a.bytes = None;
                a.path = str_of("path").map(str::to_owned);
                attachments.push(a);
            }
            _ => {}
        }
    }
    if text.trim().is_empty() && !attachments.is_empty() {
        text = (attachments.iter())
            .map(|a| match (&a.path, a.bytes) {
                (Some(path), _) => format!("[image {path}]"),
                (None, bytes) => images::label(a.mime.as_deref(), bytes.unwrap_or(0)),
            })
            .collect::<Vec<_>>()
            .join(" ");
    }
    Completed::Prompt { text, attachments }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_user_message_item_is_a_prompt() {
        let item = json!({"type": "UserMessage", "id": "u1", "content": [
            {"type": "text", "text": "Fix the ", "text_elements": []},
            {"type": "text", "text": "build"}]});
        let Completed::Prompt { text, attachments } = completed(&item) else {
            panic!("not a prompt")
        };
        assert_eq!((text.as_str(), attachments.len()), ("Fix the build", 0));
        let image = json!({"type": "UserMessage", "id": "u2", "content": [
            {"type": "image", "image_url": "data:image/png;base64,iVBORw0KGgo="}]});
        let Completed::Prompt { text, .. } = completed(&image) else {
            panic!("not a prompt")
        };
        assert_eq!(text, "[image image/png, 8 B]");
    }

    #[test]
    fn a_failed_status_or_exit_code_fails_the_call() {
        for item in [
            json!({"type": "CommandExecution", "id": "c1", "status": "failed"}),
            json!({"type": "CommandExecution", "id": "c1", "status": "completed", "exitCode": 7}),
            json!({"type": "DynamicToolCall", "id": "c1", "status": "completed", "success": false}),
        ] {
            assert_eq!(completed(&item), Completed::Failed("c1".into()), "{item}");
        }
        let ok =
            json!({"type": "CommandExecution", "id": "c1", "status": "completed", "exitCode": 0});
        assert_eq!(completed(&ok), Completed::Other);
    }
}
