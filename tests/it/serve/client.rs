//! A running `mctl serve` and a raw HTTP/1.1 client for it: raw, so a test can send exactly the
//! headers an attacker would (a foreign `Host`, a cross-site `Origin`, no token at all).

use crate::support::mctl_command;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::Duration;

/// `mctl serve` on a free port of loopback; killed when dropped.
pub struct Served {
    pub child: Child,
    pub bind: String,
    pub token: String,
    pub announce: Value,
}

/// How a test starts the server beyond its arguments.
#[derive(Default)]
pub struct Launch {
    /// Variables set for it (test hooks, `MCTL_LOG`).
    pub env: Vec<(&'static str, String)>,
    /// Its limit on open descriptors, soft and hard (as `ulimit -n` sets it).
    pub nofile: Option<u32>,
    /// Where its standard error goes (else nowhere).
    pub log: Option<std::fs::File>,
}

impl Served {
    pub fn start(dirs: &[&Path], extra: &[&str]) -> Self {
        Self::start_with(dirs, extra, Launch::default())
    }

    pub fn start_with(dirs: &[&Path], extra: &[&str], how: Launch) -> Self {
        let mut cmd = mctl_command();
        for (k, v) in &how.env {
            cmd.env(k, v);
        }
        if let Some(n) = how.nofile {
            // The same command under a shell that lowers the limit first.
            let mut limited = std::process::Command::new("sh");
            limited.env_clear();
            for (k, v) in cmd.get_envs() {
                if let Some(v) = v {
                    limited.env(k, v);
                }
            }
            limited
                .arg("-c")
                .arg(format!("ulimit -n {n} && exec \"$0\" \"$@\""))
                .arg(cmd.get_program());
            cmd = limited;
        }
        for d in dirs {
            cmd.arg("--runs-dir").arg(d);
        }
        let stderr = how.log.map_or_else(Stdio::null, Stdio::from);
        let mut child = cmd
            .args(["serve", "--bind", "127.0.0.1:0", "--json"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("mctl serve starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let announce: Value = serde_json::from_str(&line).expect("one JSON line on start");
        Self {
            bind: announce["bind"].as_str().unwrap().to_string(),
            token: announce["token"].as_str().unwrap().to_string(),
            announce,
            child,
        }
    }

    pub fn bearer(&self) -> String {
        format!("Authorization: Bearer {}", self.token)
    }

    pub fn origin(&self) -> String {
        format!("Origin: http://{}", self.bind)
    }

    /// `method path` with `headers` (each `Name: value`) and `body`; `Host` is the bind address
    /// unless a header gives another.
    pub fn send(&self, method: &str, path: &str, headers: &[&str], body: &[u8]) -> Resp {
        let mut s = TcpStream::connect(&self.bind).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        s.write_all(request(&self.bind, method, path, headers, body).as_slice())
            .unwrap();
        let mut raw = Vec::new();
        s.read_to_end(&mut raw).unwrap();
        let resp = Resp::parse(&raw);
        // No answer ever sets a cookie: a browser would send it to every port of the host.
        assert_eq!(resp.header("set-cookie"), None, "{method} {path}");
        resp
    }

    pub fn get(&self, path: &str) -> Resp {
        self.send("GET", path, &[&self.bearer()], b"")
    }

    /// A state-changing request as the page makes it: token and same-origin `Origin`.
    pub fn post(&self, path: &str, body: &Value) -> Resp {
        let headers = [
            self.bearer(),
            self.origin(),
            "Content-Type: application/json".into(),
        ];
        let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
        self.send("POST", path, &headers, body.to_string().as_bytes())
    }

    /// Opens a stream (`GET`, or `POST` with a body) and returns it unread.
    pub fn open_stream(&self, method: &str, path: &str, headers: &[&str], body: &[u8]) -> Stream {
        let mut s = TcpStream::connect(&self.bind).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        s.write_all(request(&self.bind, method, path, headers, body).as_slice())
            .unwrap();
        let mut reader = BufReader::new(s);
        let mut status = String::new();
        reader.read_line(&mut status).unwrap();
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if line == "\r\n" || line.is_empty() {
                break;
            }
        }
        Stream {
            status: status.split(' ').nth(1).unwrap_or("").parse().unwrap_or(0),
            reader,
            text: String::new(),
            last_chunk: false,
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn request(host: &str, method: &str, path: &str, headers: &[&str], body: &[u8]) -> Vec<u8> {
    let mut head = format!("{method} {path} HTTP/1.1\r\n");
    if !headers
        .iter()
        .any(|h| h.to_ascii_lowercase().starts_with("host:"))
    {
        head.push_str(&format!("Host: {host}\r\n"));
    }
    for h in headers {
        head.push_str(h);
        head.push_str("\r\n");
    }
    head.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    ));
    let mut out = head.into_bytes();
    out.extend_from_slice(body);
    out
}

pub struct Resp {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Resp {
    fn parse(raw: &[u8]) -> Self {
        let end = raw
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .expect("a complete head");
        let head = String::from_utf8_lossy(&raw[..end]).into_owned();
        let mut lines = head.split("\r\n");
        let status = lines
            .next()
            .unwrap()
            .split(' ')
            .nth(1)
            .unwrap()
            .parse()
            .unwrap();
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
            .collect();
        let mut body = raw[end + 4..].to_vec();
        if headers
            .iter()
            .any(|(k, v)| k == "transfer-encoding" && v == "chunked")
        {
            body = dechunk(&body);
        }
        Self {
            status,
            headers,
            body,
        }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&self.body)))
    }
}

fn dechunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(nl) = body.windows(2).position(|w| w == b"\r\n") {
        let size =
            usize::from_str_radix(std::str::from_utf8(&body[..nl]).unwrap().trim(), 16).unwrap();
        if size == 0 {
            break;
        }
        out.extend_from_slice(&body[nl + 2..nl + 2 + size]);
        body = &body[nl + 2 + size + 2..];
    }
    out
}

/// An open event stream (chunked), read one event at a time.
pub struct Stream {
    pub status: u16,
    reader: BufReader<TcpStream>,
    /// De-chunked text not yet split into events.
    text: String,
    /// The body's last (empty) chunk came: the server ended the stream.
    last_chunk: bool,
}

impl Stream {
    /// The next event `(name, data)`, skipping keep-alive comments; `None` when the stream ends.
    pub fn next_event(&mut self) -> Option<(String, String)> {
        loop {
            if let Some(end) = self.text.find("\n\n") {
                let block: String = self.text.drain(..end + 2).collect();
                let mut name = String::from("message");
                let mut data = Vec::new();
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("event:") {
                        name = v.trim().to_string();
                    } else if let Some(v) = line.strip_prefix("data:") {
                        data.push(v.strip_prefix(' ').unwrap_or(v).to_string());
                    }
                }
                if !data.is_empty() {
                    return Some((name, data.join("\n")));
                }
                continue;
            }
            let mut size = String::new();
            if self.reader.read_line(&mut size).ok()? == 0 {
                return None;
            }
            let size = usize::from_str_radix(size.trim(), 16).ok()?;
            if size == 0 {
                self.last_chunk = true;
                return None;
            }
            let mut chunk = vec![0; size + 2];
            self.reader.read_exact(&mut chunk).ok()?;
            self.text.push_str(&String::from_utf8_lossy(&chunk[..size]));
        }
    }

    /// Reads events until one named `name` whose data satisfies `pick`, for at most `wait` of
    /// silence; `None` when none came.
    pub fn within(
        &mut self,
        wait: Duration,
        name: &str,
        pick: impl Fn(&Value) -> bool,
    ) -> Option<Value> {
        self.reader.get_ref().set_read_timeout(Some(wait)).unwrap();
        let found = loop {
            let Some((n, data)) = self.next_event() else {
                break None;
            };
            let v: Value = serde_json::from_str(&data).unwrap();
            if n == name && pick(&v) {
                break Some(v);
            }
        };
        self.reader
            .get_ref()
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        found
    }

    /// Whether the server ended the stream (rather than the connection being cut).
    pub fn ended_cleanly(&self) -> bool {
        self.last_chunk
    }

    /// Reads events until one named `name` whose data satisfies `pick`.
    pub fn until(&mut self, name: &str, pick: impl Fn(&Value) -> bool) -> Value {
        loop {
            let (n, data) = self.next_event().expect("the stream goes on");
            let v: Value = serde_json::from_str(&data).unwrap();
            if n == name && pick(&v) {
                return v;
            }
        }
    }
}
