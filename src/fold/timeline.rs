//! Turning a parsed event into a [`TimelineEvent`]: the fields a viewer needs, with big texts
//! shortened (the full text of a tool result is read on demand, never carried here).

use crate::model::{AttachmentInfo, ErrorInfo, TimelineEvent, ToolCallRef, INPUT_MAX, TEXT_MAX};
use crate::retained::lines::utf8_prefix;
use crate::transcript::event::{ContentBlock, Event};
use serde::Deserialize;
use serde_json::Value;

/// A text at most `max` bytes long, and its full size when it had to be shortened.
pub(crate) fn shorten(text: &str, max: usize) -> (String, Option<u64>) {
    if text.len() <= max {
        return (text.to_owned(), None);
    }
    let cut = utf8_prefix(text.as_bytes(), max);
    (
        String::from_utf8_lossy(cut).into_owned(),
        Some(text.len() as u64),
    )
}

/// A JSON value as text: a JSON string shows as its content, anything else as compact JSON.
pub(crate) fn json_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// What the fold itself reads of an event's row (a message's usage and its calls), for a
/// reading that keeps no timeline: the rest of [`describe`] (a tool input written out as JSON,
/// each text cut to size) costs more than the fold and would be dropped.
pub(crate) fn describe_for(kind: &str, event: &Event, keep_timeline: bool) -> TimelineEvent {
    match (keep_timeline, event) {
        (true, _) => describe(kind, event),
        (false, Event::AssistantMessage { content, usage, .. }) => TimelineEvent {
            kind: kind.to_owned(),
            tool_calls: content.iter().filter_map(call_ref).collect(),
            usage: usage.clone(),
            ..Default::default()
        },
        (false, _) => TimelineEvent {
            kind: kind.to_owned(),
            ..Default::default()
        },
    }
}

/// The call a block of a message makes, if it is a call.
pub(crate) fn call_ref(block: &ContentBlock) -> Option<ToolCallRef> {
    match block {
        ContentBlock::ToolCall { tool_call_id, name } => Some(ToolCallRef {
            tool_call_id: tool_call_id.clone(),
            name: name.clone().unwrap_or_else(|| "tool".to_owned()),
        }),
        _ => None,
    }
}

/// The event's fields for the timeline (everything but `line`, `seq`, `ts`, filled by the caller).
pub(crate) fn describe(kind: &str, event: &Event) -> TimelineEvent {
    let mut t = TimelineEvent {
        kind: kind.to_owned(),
        ..Default::default()
    };
    let set_text = |t: &mut TimelineEvent, text: &str| {
        let (s, full) = shorten(text, TEXT_MAX);
        t.text = Some(s);
        t.text_bytes = full;
    };
    let set_input = |t: &mut TimelineEvent, value: &Value| {
        let json = value.to_string();
        let (s, full) = shorten(&json, INPUT_MAX);
        t.input = Some(s);
        t.input_bytes = Some(full.unwrap_or(json.len() as u64));
    };
    match event {
        Event::RunStarted {
            cwd,
            mode,
            provider,
            model,
        } => {
            t.cwd.clone_from(cwd);
            t.mode.clone_from(mode);
            t.provider.clone_from(provider);
            t.model.clone_from(model);
        }
        Event::ContextSnapshot { snapshot } => {
            if let Some(s) = snapshot {
                t.path.clone_from(&s.workspace_root);
                t.estimated_tokens = s.estimated_tokens;
            }
        }
        Event::UserMessage {
            message_id,
            text,
            attachments,
        } => {
            t.message_id.clone_from(message_id);
            set_text(&mut t, text);
            t.attachments = attachments
                .iter()
                .map(|a| AttachmentInfo {
                    path: a.path.clone(),
                    mime: a.mime.clone(),
                    bytes: a.bytes.unwrap_or_else(|| {
                        a.content.as_ref().map_or(0, |c| c.len() as u64)
                            + a.data_uri.as_ref().map_or(0, |d| d.len() as u64)
                    }),
                })
                .collect();
        }
        Event::AssistantMessage {
            message_id,
            content,
            usage,
            timing,
        } => {
            t.message_id.clone_from(message_id);
            let mut text = String::new();
            let mut thinking = String::new();
            for block in content {
                match block {
                    ContentBlock::Text { text: s } => push_para(&mut text, s),
                    ContentBlock::Thinking { text: s } => push_para(&mut thinking, s),
                    call @ ContentBlock::ToolCall { .. } => t.tool_calls.extend(call_ref(call)),
                    ContentBlock::Other => {}
                }
            }
            if !text.is_empty() {
                set_text(&mut t, &text);
            }
            if !thinking.is_empty() {
                t.thinking = Some(shorten(&thinking, TEXT_MAX).0);
            }
            t.usage.clone_from(usage);
            t.timing.clone_from(timing);
        }
        Event::ToolCallStarted {
            tool_call_id,
            name,
            input,
            summary,
            ..
        } => {
            t.tool_call_id = Some(tool_call_id.clone());
            t.tool.clone_from(name);
            t.summary.clone_from(summary);
            if let Some(raw) = input {
                set_input(&mut t, raw);
            }
        }
        Event::ToolCallFinished { tool_call_id, .. } => {
            t.tool_call_id = Some(tool_call_id.clone());
        }
        Event::PermissionRequested { request } => {
            if let Some(raw) = request {
                set_input(&mut t, raw);
                #[derive(Deserialize)]
                #[serde(rename_all = "camelCase")]
                struct Req {
                    id: Option<String>,
                    request_id: Option<String>,
                    tool_name: Option<String>,
                }
                if let Ok(r) = Req::deserialize(raw) {
                    t.request_id = r.request_id.or(r.id);
                    t.tool = r.tool_name;
                }
            }
        }
        Event::PermissionResolved {
            request_id,
            decision,
        }
        | Event::DiffResolved {
            proposal_id: request_id,
            decision,
        } => {
            t.request_id.clone_from(request_id);
            t.decision = decision.as_ref().map(decision_text);
        }
        Event::DiffProposed { proposal } => {
            if let Some(raw) = proposal {
                t.input_bytes = Some(raw.to_string().len() as u64);
                #[derive(Deserialize)]
                #[serde(rename_all = "camelCase")]
                struct Proposal {
                    id: Option<String>,
                    proposal_id: Option<String>,
                    path: Option<String>,
                }
                if let Ok(p) = Proposal::deserialize(raw) {
                    t.request_id = p.proposal_id.or(p.id);
                    t.path = p.path;
                }
            }
        }
        Event::FileChanged {
            path,
            old_hash,
            new_hash,
        } => {
            t.path.clone_from(path);
            t.old_hash.clone_from(old_hash);
            t.new_hash.clone_from(new_hash);
        }
        Event::RunResult { result } => {
            #[derive(Deserialize)]
            struct Res {
                status: Option<String>,
            }
            t.status = result
                .as_ref()
                .and_then(|r| Res::deserialize(r).ok())
                .and_then(|r| r.status)
                .or_else(|| Some("done".to_owned()));
        }
        Event::RunError { error } => {
            t.error = error.as_ref().map(|e| ErrorInfo {
                code: e.code.clone(),
                message: e.message.clone(),
                detail: e
                    .detail
                    .as_ref()
                    .map(|d| shorten(&json_text(d), INPUT_MAX).0),
                retryable: e.retryable,
            });
        }
        Event::ContextCompacted { summary } => {
            if let Some(s) = summary {
                set_text(&mut t, s);
            }
        }
        Event::SteeringInjected { reason } => {
            if let Some(s) = reason {
                set_text(&mut t, s);
            }
        }
        Event::UserQuestionRequested {
            request_id,
            question: value,
        }
        | Event::UserQuestionResolved {
            request_id,
            answer: value,
        }
        | Event::AdvisorRequested {
            request_id,
            question: value,
        }
        | Event::AdvisorResolved {
            request_id,
            advice: value,
        }
        | Event::SubagentResolved {
            request_id,
            result: value,
        } => {
            t.request_id.clone_from(request_id);
            if let Some(v) = value {
                set_text(&mut t, &json_text(v));
            }
        }
        Event::SubagentRequested {
            request_id,
            subagent,
            task,
        } => {
            t.request_id.clone_from(request_id);
            t.tool = subagent.as_ref().map(|s| shorten(&json_text(s), 200).0);
            if let Some(v) = task {
                set_text(&mut t, &json_text(v));
            }
        }
        Event::AssistantDelta
        | Event::ToolProgress
        | Event::ObservedToolCall
        | Event::ObservedToolResult => {}
    }
    t
}

fn decision_text(raw: &Value) -> String {
    #[derive(Deserialize)]
    struct Decision {
        behavior: Option<String>,
        scope: Option<String>,
    }
    match Decision::deserialize(raw) {
        Ok(Decision {
            behavior: Some(b),
            scope: Some(s),
        }) => format!("{b} ({s})"),
        Ok(Decision {
            behavior: Some(b),
            scope: None,
        }) => b,
        _ => shorten(&json_text(raw), 200).0,
    }
}

fn push_para(out: &mut String, s: &str) {
    if !out.is_empty() {
        out.push_str("\n\n");
    }
    out.push_str(s);
}
