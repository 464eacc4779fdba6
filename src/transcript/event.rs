//! Transcript envelopes and events (spec A.3), as the harness writes them.
//!
//! Parsing is tolerant by design: every field that a reader can live without is optional, an
//! unknown event type is kept as [`Event::Unknown`], and unknown keys are reported rather than
//! refused. Only a line that is not a JSON object with an `event` object is unreadable.
//!
//! A few fields are parsed though nothing reads them (`#[allow(dead_code)]`). They stay: the
//! types mirror the schema key for key (for events a test ties them to [`known_event_keys`]),
//! and a value of the wrong type there makes the line or event invalid.

use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::collections::HashMap;

/// The schema version this reader was written for.
pub(crate) const SCHEMA_VERSION: u64 = 1;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Envelope<'a> {
    pub schema_version: Option<u64>,
    #[allow(dead_code)]
    pub run_id: Option<String>,
    pub seq: Option<u64>,
    pub ts: Option<i64>,
    #[serde(borrow)]
    pub event: &'a RawValue,
}

pub(crate) const ENVELOPE_KEYS: &[&str] = &["schemaVersion", "runId", "seq", "ts", "event"];

pub use crate::model::{Timing, Usage};

#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum ContentBlock {
    Text {
        #[serde(default)]
        text: String,
    },
    Thinking {
        #[serde(default)]
        text: String,
    },
    ToolCall {
        #[serde(rename = "toolCallId")]
        tool_call_id: String,
        #[serde(default)]
        name: Option<String>,
    },
    #[serde(other)]
    Other,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(crate) struct Attachment {
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default)]
    pub content: Option<String>,
    #[serde(default)]
    pub mime: Option<String>,
    #[serde(default, rename = "dataUri")]
    pub data_uri: Option<String>,
    /// Its size when known without its bytes (another agent's image, counted, not kept).
    #[serde(skip)]
    pub bytes: Option<u64>,
}

impl Attachment {
    /// An attachment known by its media type and size alone.
    pub(crate) fn sized(mime: Option<String>, bytes: u64) -> Self {
        Self {
            path: None,
            content: None,
            mime,
            data_uri: None,
            bytes: Some(bytes),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ToolResult {
    #[serde(default = "yes")]
    pub ok: bool,
    #[serde(default)]
    pub content: String,
    #[serde(default)]
    #[allow(dead_code)]
    pub metadata: Option<Json>,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct RunErrorBody {
    #[serde(default)]
    pub code: Option<String>,
    #[serde(default)]
    pub message: Option<String>,
    #[serde(default)]
    pub detail: Option<Json>,
    #[serde(default)]
    pub retryable: Option<bool>,
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Snapshot {
    #[serde(default, rename = "workspaceRoot")]
    pub workspace_root: Option<String>,
    #[serde(default)]
    #[allow(dead_code)]
    pub attachments: Option<Vec<IgnoredAny>>,
    #[serde(default, rename = "lensItems")]
    #[allow(dead_code)]
    pub lens_items: Option<Vec<IgnoredAny>>,
    #[serde(default, rename = "estimatedTokens")]
    pub estimated_tokens: Option<u64>,
    #[serde(default)]
    #[allow(dead_code)]
    pub omitted: Option<Json>,
}

/// Any JSON, for fields a viewer shows but no reader interprets. (A borrowed `RawValue` would
/// be cheaper, but serde cannot hand one through an internally tagged enum.)
pub(crate) type Json = serde_json::Value;

#[derive(Debug, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub(crate) enum Event {
    RunStarted {
        cwd: Option<String>,
        mode: Option<String>,
        provider: Option<String>,
        model: Option<String>,
    },
    ContextSnapshot {
        snapshot: Option<Snapshot>,
    },
    UserMessage {
        message_id: Option<String>,
        #[serde(default)]
        text: String,
        #[serde(default)]
        attachments: Vec<Attachment>,
    },
    AssistantMessage {
        message_id: Option<String>,
        #[serde(default)]
        content: Vec<ContentBlock>,
        usage: Option<Usage>,
        timing: Option<Timing>,
    },
    ToolCallStarted {
        tool_call_id: String,
        name: Option<String>,
        input: Option<Json>,
        summary: Option<String>,
        #[allow(dead_code)]
        capability: Option<Json>,
    },
    ToolCallFinished {
        tool_call_id: String,
        result: ToolResult,
    },
    PermissionRequested {
        request: Option<Json>,
    },
    PermissionResolved {
        request_id: Option<String>,
        decision: Option<Json>,
    },
    DiffProposed {
        proposal: Option<Json>,
    },
    DiffResolved {
        proposal_id: Option<String>,
        decision: Option<Json>,
    },
    FileChanged {
        path: Option<String>,
        old_hash: Option<String>,
        new_hash: Option<String>,
    },
    RunResult {
        result: Option<Json>,
    },
    RunError {
        error: Option<RunErrorBody>,
    },
    ContextCompacted {
        summary: Option<String>,
    },
    SteeringInjected {
        reason: Option<String>,
    },
    UserQuestionRequested {
        request_id: Option<String>,
        question: Option<Json>,
    },
    UserQuestionResolved {
        request_id: Option<String>,
        answer: Option<Json>,
    },
    SubagentRequested {
        request_id: Option<String>,
        subagent: Option<Json>,
        task: Option<Json>,
    },
    SubagentResolved {
        request_id: Option<String>,
        result: Option<Json>,
    },
    AdvisorRequested {
        request_id: Option<String>,
        question: Option<Json>,
    },
    AdvisorResolved {
        request_id: Option<String>,
        advice: Option<Json>,
    },
    // Valid but normally not persisted (streaming and observation events).
    AssistantDelta,
    ToolProgress,
    ObservedToolCall,
    ObservedToolResult,
}

/// Keys each known event type may carry besides `type`, `runId` and `ts`.
pub(crate) fn known_event_keys(event_type: &str) -> Option<&'static [&'static str]> {
    Some(match event_type {
        "run_started" => &["cwd", "mode", "provider", "model"],
        "context_snapshot" => &["snapshot"],
        "user_message" => &["messageId", "text", "attachments"],
        "assistant_message" => &["messageId", "content", "usage", "timing"],
        "tool_call_started" => &["toolCallId", "name", "input", "summary", "capability"],
        "tool_call_finished" => &["toolCallId", "result"],
        "permission_requested" => &["request"],
        "permission_resolved" => &["requestId", "decision"],
        "diff_proposed" => &["proposal"],
        "diff_resolved" => &["proposalId", "decision"],
        "file_changed" => &["path", "oldHash", "newHash"],
        "run_result" => &["result"],
        "run_error" => &["error"],
        "context_compacted" => &["summary"],
        "steering_injected" => &["reason"],
        "user_question_requested" => &["requestId", "question"],
        "user_question_resolved" => &["requestId", "answer"],
        "subagent_requested" => &["requestId", "subagent", "task"],
        "subagent_resolved" => &["requestId", "result"],
        "advisor_requested" => &["requestId", "question"],
        "advisor_resolved" => &["requestId", "advice"],
        // Transient events carry fields of their own that nobody here reads.
        "assistant_delta" | "tool_progress" | "observed_tool_call" | "observed_tool_result" => &[],
        _ => return None,
    })
}

pub(crate) const COMMON_EVENT_KEYS: &[&str] = &["type", "runId", "ts"];

/// The keys of a JSON object that are not in `known` (nor common to all events when
/// `event_keys`), sorted. Values are skipped, not parsed.
pub(crate) fn unknown_keys(raw: &str, known: &[&str], event_keys: bool) -> Vec<String> {
    let Ok(map) = serde_json::from_str::<HashMap<String, IgnoredAny>>(raw) else {
        return Vec::new();
    };
    let mut extra: Vec<String> = map
        .into_keys()
        .filter(|k| {
            let common = event_keys && COMMON_EVENT_KEYS.contains(&k.as_str());
            !(known.contains(&k.as_str()) || common)
        })
        .collect();
    extra.sort();
    extra
}

/// Just the `type` of an event, to name an unknown or invalid one.
#[derive(Deserialize)]
pub(crate) struct EventType {
    #[serde(rename = "type")]
    pub kind: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every variant with its fields, spelled as on the wire. The match is exhaustive and names
    /// every field without `..`: a variant or field added to [`Event`] fails to compile here
    /// until it is listed, and then the test below fails until [`known_event_keys`] has it.
    fn wire_keys(e: &Event) -> (&'static str, &'static [&'static str]) {
        #[allow(unused_variables)]
        match e {
            Event::RunStarted {
                cwd,
                mode,
                provider,
                model,
            } => ("run_started", &["cwd", "mode", "provider", "model"]),
            Event::ContextSnapshot { snapshot } => ("context_snapshot", &["snapshot"]),
            Event::UserMessage {
                message_id,
                text,
                attachments,
            } => ("user_message", &["messageId", "text", "attachments"]),
            Event::AssistantMessage {
                message_id,
                content,
                usage,
                timing,
            } => (
                "assistant_message",
                &["messageId", "content", "usage", "timing"],
            ),
            Event::ToolCallStarted {
                tool_call_id,
                name,
                input,
                summary,
                capability,
            } => (
                "tool_call_started",
                &["toolCallId", "name", "input", "summary", "capability"],
            ),
            Event::ToolCallFinished {
                tool_call_id,
                result,
            } => ("tool_call_finished", &["toolCallId", "result"]),
            Event::PermissionRequested { request } => ("permission_requested", &["request"]),
            Event::PermissionResolved {
                request_id,
                decision,
            } => ("permission_resolved", &["requestId", "decision"]),
            Event::DiffProposed { proposal } => ("diff_proposed", &["proposal"]),
            Event::DiffResolved {
                proposal_id,
                decision,
            } => ("diff_resolved", &["proposalId", "decision"]),
            Event::FileChanged {
                path,
                old_hash,
                new_hash,
            } => ("file_changed", &["path", "oldHash", "newHash"]),
            Event::RunResult { result } => ("run_result", &["result"]),
            Event::RunError { error } => ("run_error", &["error"]),
            Event::ContextCompacted { summary } => ("context_compacted", &["summary"]),
            Event::SteeringInjected { reason } => ("steering_injected", &["reason"]),
            Event::UserQuestionRequested {
                request_id,
                question,
            } => ("user_question_requested", &["requestId", "question"]),
            Event::UserQuestionResolved { request_id, answer } => {
                ("user_question_resolved", &["requestId", "answer"])
            }
            Event::SubagentRequested {
                request_id,
                subagent,
                task,
            } => ("subagent_requested", &["requestId", "subagent", "task"]),
            Event::SubagentResolved { request_id, result } => {
                ("subagent_resolved", &["requestId", "result"])
            }
            Event::AdvisorRequested {
                request_id,
                question,
            } => ("advisor_requested", &["requestId", "question"]),
            Event::AdvisorResolved { request_id, advice } => {
                ("advisor_resolved", &["requestId", "advice"])
            }
            Event::AssistantDelta => ("assistant_delta", &[]),
            Event::ToolProgress => ("tool_progress", &[]),
            Event::ObservedToolCall => ("observed_tool_call", &[]),
            Event::ObservedToolResult => ("observed_tool_result", &[]),
        }
    }

    /// The smallest valid event of each type (only two have fields that are required).
    const SAMPLES: &[&str] = &[
        r#"{"type":"run_started"}"#,
        r#"{"type":"context_snapshot"}"#,
        r#"{"type":"user_message"}"#,
        r#"{"type":"assistant_message"}"#,
        r#"{"type":"tool_call_started","toolCallId":"c"}"#,
        r#"{"type":"tool_call_finished","toolCallId":"c","result":{"ok":true,"content":""}}"#,
        r#"{"type":"permission_requested"}"#,
        r#"{"type":"permission_resolved"}"#,
        r#"{"type":"diff_proposed"}"#,
        r#"{"type":"diff_resolved"}"#,
        r#"{"type":"file_changed"}"#,
        r#"{"type":"run_result"}"#,
        r#"{"type":"run_error"}"#,
        r#"{"type":"context_compacted"}"#,
        r#"{"type":"steering_injected"}"#,
        r#"{"type":"user_question_requested"}"#,
        r#"{"type":"user_question_resolved"}"#,
        r#"{"type":"subagent_requested"}"#,
        r#"{"type":"subagent_resolved"}"#,
        r#"{"type":"advisor_requested"}"#,
        r#"{"type":"advisor_resolved"}"#,
        r#"{"type":"assistant_delta"}"#,
        r#"{"type":"tool_progress"}"#,
        r#"{"type":"observed_tool_call"}"#,
        r#"{"type":"observed_tool_result"}"#,
    ];

    #[test]
    fn every_event_variant_has_exactly_its_fields_as_known_keys() {
        let mut seen = std::collections::BTreeSet::new();
        for sample in SAMPLES {
            let event: Event =
                serde_json::from_str(sample).unwrap_or_else(|e| panic!("{sample}: {e}"));
            let (kind, keys) = wire_keys(&event);
            let typed: EventType = serde_json::from_str(sample).unwrap();
            assert_eq!(typed.kind, kind, "{sample} is read as another variant");
            let mut known = known_event_keys(kind)
                .unwrap_or_else(|| panic!("{kind} is not known"))
                .to_vec();
            let mut keys = keys.to_vec();
            known.sort_unstable();
            keys.sort_unstable();
            assert_eq!(known, keys, "the known keys of {kind}");
            seen.insert(kind);
        }
        assert_eq!(seen.len(), SAMPLES.len(), "one sample per variant");
        assert_eq!(known_event_keys("no_such_event"), None);
    }
}
