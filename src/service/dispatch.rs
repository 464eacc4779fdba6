//! Calling a command by name with JSON in and out, for transports that carry JSON (the HTTP
//! server). The match over every command's name is generated from the contract
//! (`wire::commands`), so a command added there is served here without a line more.

use super::{Service, Sink};
use crate::gc::Progress;
use crate::watch::{Change, RunUpdate};
use crate::wire::SearchBatch;
use crate::{Error, ErrorCode};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

/// Calls command `name` of `svc` with its request as JSON (`null` for a command that takes
/// none); a command that streams sends its items to `items`, as JSON. Answers its response as
/// JSON, or the command's error (`invalid` for an unknown command or a malformed request).
pub fn dispatch(svc: &Service, name: &str, req: Value, items: Sink<Value>) -> Result<Value, Error> {
    dispatch_command(svc, name, req, items).unwrap_or_else(|| {
        Err(Error::new(
            ErrorCode::Invalid,
            format!("there is no command `{}`", crate::runs::clipped(name)),
        ))
    })
}

/// Checks what a streaming command's request names (its runs directories, its run) before it
/// starts, with the checks the command itself makes: a transport that answers a streaming call
/// at once (and sends its end later) refuses a bad one with the status a plain call gets.
pub fn precheck(svc: &Service, name: &str, req: &Value) -> Result<(), Error> {
    use crate::wire::command as c;
    fn parse<T: DeserializeOwned>(req: &Value) -> Result<T, Error> {
        T::deserialize(req)
            .map_err(|e| Error::new(ErrorCode::Invalid, format!("a malformed request: {e}")))
    }
    match name {
        "follow_run" => {
            let r: c::follow_run::Request = parse(req)?;
            svc.runs_dir(&r.dir)?.run_id(&r.run).map(drop)
        }
        "search" => {
            let r: c::search::Request = parse(req)?;
            crate::search::check_pattern(&r.pattern, r.regex, r.ignore_case)?;
            for dir in &r.dirs {
                let d = svc.runs_dir(dir)?;
                if let Some(run) = &r.run {
                    crate::search::run_ids(&d, &d.layout()?, Some(run))?;
                }
            }
            Ok(())
        }
        "gc_apply" => {
            let r: c::gc_apply::Request = parse(req)?;
            svc.may_change("garbage collection")?;
            svc.runs_dir(&r.dir).map(drop)
        }
        _ => Ok(()),
    }
}

/// Reads a request, calls `f`, and writes its response.
pub(crate) fn json_call<Req: DeserializeOwned, Resp: Serialize>(
    req: Value,
    f: impl FnOnce(Req) -> Result<Resp, Error>,
) -> Result<Value, Error> {
    let req = serde_json::from_value(req)
        .map_err(|e| Error::new(ErrorCode::Invalid, format!("a malformed request: {e}")))?;
    let resp = f(req)?;
    serde_json::to_value(resp).map_err(|e| Error::new(ErrorCode::Io, e.to_string()))
}

/// A sink of typed items that sends each one on as JSON.
pub(crate) fn json_sink<T: Serialize + 'static>(items: Sink<Value>) -> Sink<T> {
    Box::new(move |item| {
        if let Ok(v) = serde_json::to_value(item) {
            items(v);
        }
    })
}

/// Makes `dispatch_command` of the contract's list: the match over every command's name, each
/// calling the method of [`Service`] named as the command.
macro_rules! dispatcher {
    ($( $(#[doc = $doc:literal])* $name:ident : $req:ty => $resp:ty $(, stream $item:ty)? ; )*) => {
        /// Calls command `name` of `svc` with its request and response as JSON; `None` when
        /// there is no such command.
        fn dispatch_command(
            svc: &Service,
            name: &str,
            req: Value,
            items: Sink<Value>,
        ) -> Option<Result<Value, Error>> {
            match name {
                $( stringify!($name) => Some(dispatcher!(@call svc $name req items $($item)?)), )*
                _ => None,
            }
        }
    };
    (@call $svc:ident $name:ident $req:ident $items:ident) => {{
        drop($items);
        json_call($req, |r| $svc.$name(r))
    }};
    (@call $svc:ident $name:ident $req:ident $items:ident $item:ty) => {
        json_call($req, |r| $svc.$name(r, json_sink::<$item>($items)))
    };
}

crate::wire::with_contract!(dispatcher);
