//! `zkh`: the harness for tests in other languages. Reads one JSON command
//! per line on stdin, answers one JSON line on stdout. See README.md.
//! When stdin closes (the parent died or is done), it stops every server and exits.

use serde_json::{json, Map, Value};
use std::io::{BufRead, Write};
use std::time::Duration;
use zk_harness::{Ensemble, FaultId, FaultReport, FaultState, Landing, Op, Options, Sasl, Select, Tls};

type Reply = Result<Value, String>;

fn main() {
    let mut ensemble: Option<Ensemble> = None;
    let mut out = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        let (reply, id, quit) = match serde_json::from_str::<Value>(&line) {
            Ok(req) => {
                let cmd = req.get("cmd").and_then(Value::as_str).unwrap_or("");
                (handle(&mut ensemble, cmd, &req), req.get("id").cloned(), cmd == "shutdown")
            }
            Err(e) => (Err(format!("not a JSON object: {e}")), None, false),
        };
        let mut obj = match reply {
            Ok(Value::Object(map)) => map,
            Ok(_) => Map::new(),
            Err(e) => Map::from_iter([("error".to_string(), json!(e))]),
        };
        obj.insert("ok".into(), json!(!obj.contains_key("error")));
        if let Some(id) = id {
            obj.insert("id".into(), id);
        }
        if writeln!(out, "{}", Value::Object(obj)).and_then(|()| out.flush()).is_err() || quit {
            break;
        }
    }
    drop(ensemble); // kills the servers, removes their directories
}

fn handle(ensemble: &mut Option<Ensemble>, cmd: &str, req: &Value) -> Reply {
    match cmd {
        "ping" | "shutdown" => Ok(json!({})),
        "start" => {
            if ensemble.is_some() {
                return Err("already started: send destroy first".into());
            }
            let e = Ensemble::start(uint(req, "servers")?.unwrap_or(1) as usize, options(req)?)
                .map_err(|e| e.to_string())?;
            let mut reply =
                json!({ "connect": e.connect_string(), "direct": e.direct_connect_string(), "servers": e.len() });
            if let Some(files) = e.tls_files() {
                // The servers' certificate names localhost: "secure_by_ip" fails a host name check.
                reply["secure"] = json!(e.secure_connect_string("localhost"));
                reply["secure_by_ip"] = json!(e.secure_connect_string("127.0.0.1"));
                reply["tls_files"] = json!({
                    "ca": files.ca, "client_cert": files.client_cert, "client_key": files.client_key,
                    "client_key_encrypted": files.client_key_encrypted, "client_key_password": zk_harness::tls::CLIENT_KEY_PASSWORD,
                    "other_ca": files.other_ca, "stranger_cert": files.stranger_cert, "stranger_key": files.stranger_key,
                });
            }
            *ensemble = Some(e);
            Ok(reply)
        }
        "destroy" => {
            ensemble.take().ok_or("not started")?;
            Ok(json!({}))
        }
        _ => {
            let e = ensemble.as_ref().ok_or_else(|| format!("{cmd:?}: not started (send start first)"))?;
            handle_started(e, cmd, req)
        }
    }
}

fn handle_started(e: &Ensemble, cmd: &str, req: &Value) -> Reply {
    let ok = |r: zk_harness::Result<()>| r.map(|()| json!({})).map_err(|e| e.to_string());
    match cmd {
        "stop" => ok(e.stop(server(req)?)),
        "kill" => ok(e.kill(server(req)?)),
        "restart" => ok(e.restart(server(req)?)),
        "leader" => Ok(json!({ "leader": e.leader() })),
        "mntr" => Ok(json!({ "mntr": e.mntr(server(req)?).map_err(|e| e.to_string())? })),
        "sessions" => Ok(json!({ "sessions": e.sessions() })),
        "servers_of" => Ok(json!({ "servers": e.servers_of(session(req)?).map_err(|e| e.to_string())? })),
        "expire" => ok(e.expire(session(req)?)),
        "partition" => ok(e.partition(session(req)?)),
        "heal" => ok(e.heal(session(req)?)),
        "drop" => Ok(json!({ "reset": e.drop_connections(session(req)?).map_err(|e| e.to_string())? })),
        "drop_reply" => armed(e.drop_reply(select(req, true)?)),
        "reset_before_reply" => armed(e.reset_before_reply(select(req, true)?)),
        "land_late" => {
            let land = select(req, false)?;
            let landing = match req.get("land").unwrap_or(&json!("before")).as_str() {
                Some("before") => Landing::Before(land),
                Some("after") => Landing::After(land),
                other => return Err(format!("land: expected \"before\" or \"after\", got {other:?}")),
            };
            armed(e.land_late(select(req, true)?, landing))
        }
        "fault" => report(e.fault(fault(req)?)),
        "wait_fault" => {
            let until = match req.get("until") {
                None | Some(Value::Null) => FaultState::Fired,
                Some(v) => v
                    .as_str()
                    .ok_or("until: expected a state name")?
                    .parse()
                    .map_err(|e: zk_harness::Error| e.to_string())?,
            };
            let timeout = Duration::from_millis(uint(req, "timeout_ms")?.unwrap_or(10_000));
            report(e.wait_fault(fault(req)?, until, timeout))
        }
        "disarm" => report(e.disarm(fault(req)?)),
        "partition_all" => ok(e.partition_all(server(req)?)),
        "heal_all" => ok(e.heal_all(server(req)?)),
        "wait_ready" => ok(e.wait_ready(Duration::from_millis(uint(req, "timeout_ms")?.unwrap_or(60_000)))),
        "create" => {
            let acl = match req.get("acl").and_then(Value::as_str).unwrap_or("all") {
                "all" => zk_harness::NodeAcl::All,
                "read" => zk_harness::NodeAcl::ReadOnly,
                other => return Err(format!("acl: expected \"all\" or \"read\", got {other:?}")),
            };
            ok(e.create_node(string(req, "path")?, acl))
        }
        "tree" => {
            let nodes = e.tree(string(req, "path")?).map_err(|e| e.to_string())?;
            let nodes: Vec<Value> = nodes
                .into_iter()
                .map(|n| json!({ "path": n.path, "ephemeral_owner": n.ephemeral_owner.to_string() }))
                .collect();
            Ok(json!({ "nodes": nodes }))
        }
        "info" => Ok(json!({
            "connect": e.connect_string(),
            "direct": e.direct_connect_string(),
            "servers": (0..e.len()).map(|i| json!({
                "client_port": e.client_port(i).ok(),
                "proxy_port": e.proxy_port(i).ok(),
                "running": e.is_running(i),
                "pid": e.pid(i),
                "log": e.log_path(i).ok().map(|p| p.display().to_string()),
            })).collect::<Vec<_>>(),
        })),
        _ => Err(format!("unknown command {cmd:?}")),
    }
}

fn armed(r: zk_harness::Result<FaultId>) -> Reply {
    Ok(json!({ "fault": r.map_err(|e| e.to_string())?.0 }))
}

fn report(r: zk_harness::Result<FaultReport>) -> Reply {
    let r = r.map_err(|e| e.to_string())?;
    let request = r.request.as_ref();
    Ok(json!({
        "fault": r.id.0,
        "kind": r.kind.name(),
        "state": r.state.name(),
        "op": request.map(|q| op_json(q.op)),
        "xid": request.map(|q| q.xid),
        "path": request.and_then(|q| q.path.clone()),
        "reply_zxid": r.reply.map(|(zxid, _)| zxid),
        "reply_err": r.reply.map(|(_, err)| err),
        "fired_after_ms": r.fired_after.map(|d| d.as_millis() as u64),
        "missed": r.missed,
    }))
}

/// An op by ZooKeeper's name, or its number if it has none.
fn op_json(code: i32) -> Value {
    Op::from_code(code).map_or(json!(code), |op| json!(op.name()))
}

/// The request a fault picks, from `session`, `op` (a name or a list of
/// names), `path` (a prefix) and `nth`; `land_`-prefixed fields when
/// `target` is false.
fn select(req: &Value, target: bool) -> Result<Select, String> {
    let key = |k: &str| {
        if target {
            k.to_string()
        } else {
            format!("land_{k}")
        }
    };
    let mut sel = if target { Select::session(session(req)?) } else { Select::any() };
    let ops = match req.get(key("op").as_str()) {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(names)) => names
            .iter()
            .map(|n| n.as_str().ok_or_else(|| format!("{}: expected op names", key("op"))))
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(format!("{}: expected an op name or a list of them", key("op"))),
    };
    for name in ops {
        sel = sel.op(name.parse().map_err(|e: zk_harness::Error| e.to_string())?);
    }
    match req.get(key("path").as_str()) {
        None | Some(Value::Null) => {}
        Some(Value::String(p)) => sel = sel.path(p.as_str()),
        Some(_) => return Err(format!("{}: expected a string", key("path"))),
    }
    if let Some(n) = uint(req, &key("nth"))? {
        sel = sel.nth(u32::try_from(n).map_err(|_| format!("{}: too large", key("nth")))?);
    }
    Ok(sel)
}

fn fault(req: &Value) -> Result<FaultId, String> {
    Ok(FaultId(uint(req, "fault")?.ok_or("missing \"fault\" (an id from drop_reply, ...)")?))
}

fn options(req: &Value) -> Result<Options, String> {
    let mut o = Options::default();
    if let Some(v) = uint(req, "tick_ms")? {
        o.tick_ms = v;
    }
    if let Some(v) = req.get("force_sync") {
        o.force_sync = v.as_bool().ok_or("force_sync: expected true or false")?;
    }
    if let Some(v) = uint(req, "init_limit")? {
        o.init_limit = v as u32;
    }
    if let Some(v) = uint(req, "sync_limit")? {
        o.sync_limit = v as u32;
    }
    o.min_session_timeout_ms = uint(req, "min_session_timeout_ms")?.or(o.min_session_timeout_ms);
    if let Some(v) = uint(req, "max_session_timeout_ms")? {
        o.max_session_timeout_ms = v;
    }
    if let Some(v) = uint(req, "start_timeout_ms")? {
        o.start_timeout = Duration::from_millis(v);
    }
    if let Some(v) = req.get("reconfig") {
        o.reconfig = v.as_bool().ok_or("reconfig: expected true or false")?;
    }
    // "tls": {"client_auth": bool, "self_signed": bool}
    if let Some(tls) = req.get("tls").filter(|v| !v.is_null()) {
        let client_auth = tls.get("client_auth").map_or(Some(false), Value::as_bool);
        let client_auth = client_auth.ok_or("tls.client_auth: expected true or false")?;
        let self_signed = tls.get("self_signed").map_or(Some(false), Value::as_bool);
        let self_signed = self_signed.ok_or("tls.self_signed: expected true or false")?;
        o.tls = Some(Tls { client_auth, self_signed });
    }
    // "sasl": {"users": {"name": "password", …}, "required": bool}
    if let Some(sasl) = req.get("sasl").filter(|v| !v.is_null()) {
        let users = sasl.get("users").and_then(Value::as_object).ok_or("sasl.users: expected {name: password}")?;
        let users = users
            .iter()
            .map(|(user, pw)| pw.as_str().map(|pw| (user.clone(), pw.to_owned())))
            .collect::<Option<Vec<_>>>()
            .ok_or("sasl.users: passwords must be strings")?;
        let required = sasl.get("required").map_or(Some(false), Value::as_bool);
        o.sasl = Some(Sasl { users, required: required.ok_or("sasl.required: expected true or false")? });
    }
    Ok(o)
}

fn uint(req: &Value, key: &str) -> Result<Option<u64>, String> {
    match req.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v.as_u64().map(Some).ok_or_else(|| format!("{key}: expected a non-negative integer")),
    }
}

fn string<'a>(req: &'a Value, key: &str) -> Result<&'a str, String> {
    req.get(key).and_then(Value::as_str).ok_or_else(|| format!("missing \"{key}\" (a string)"))
}

fn server(req: &Value) -> Result<usize, String> {
    Ok(uint(req, "server")?.ok_or("missing \"server\" (0-based index)")? as usize)
}

/// A session id as a JSON integer, or a string: decimal or `0x` hex (for
/// clients whose JSON numbers are doubles).
fn session(req: &Value) -> Result<i64, String> {
    let bad = || "\"session\": expected an integer, or a decimal or 0x-hex string".to_string();
    match req.get("session").ok_or("missing \"session\"")? {
        Value::Number(n) => n.as_i64().or_else(|| n.as_u64().map(|u| u as i64)).ok_or_else(bad),
        Value::String(s) => {
            let s = s.trim();
            match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
                Some(hex) => u64::from_str_radix(hex, 16).map(|u| u as i64).map_err(|_| bad()),
                None => s.parse::<i64>().map_err(|_| bad()),
            }
        }
        _ => Err(bad()),
    }
}
