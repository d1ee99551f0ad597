//! Starting servers: free ports, configs, and waiting until they serve.

use crate::error::{Error, Result};
use crate::options::{Install, Options};
use crate::server::{Ports, Probe, Server};
use std::net::{Ipv4Addr, TcpListener};
use std::path::Path;
use std::time::{Duration, Instant};

/// Start attempts when another process takes a port between the harness
/// choosing it and the server binding it.
const START_ATTEMPTS: usize = 4;
const KILL_GRACE: Duration = Duration::from_secs(10);

/// Why servers did not come up.
pub(crate) enum StartError {
    PortClash,
    Failed(Error),
}

impl From<Error> for StartError {
    fn from(e: Error) -> StartError {
        StartError::Failed(e)
    }
}

/// Starts `n` servers in `root` and waits until they serve; on a port clash,
/// starts again on new ports.
pub(crate) fn start_servers(root: &Path, n: usize, opts: &Options, install: &Install) -> Result<Vec<Server>> {
    let quorum = n > 1;
    let deadline = Instant::now() + opts.start_timeout;
    for attempt in 1..=START_ATTEMPTS {
        let (ports, hosts) = match &opts.net {
            // Each on a host of its own: ZooKeeper's usual ports, which no one else has there.
            Some(net) => {
                let hosts = (0..n).map(|_| net.add_host().map(Some)).collect::<Result<Vec<_>>>()?;
                (vec![Ports { client: 2181, quorum: 2888, election: 3888, secure: 2281 }; n], hosts)
            }
            None => (free_ports(n)?, vec![None; n]),
        };
        let servers: Vec<Server> = ports
            .iter()
            .zip(hosts)
            .enumerate()
            .map(|(i, (p, host))| Server::new(i, root.join(format!("server{i}")), *p, host))
            .collect();
        let peers: Vec<_> = servers.iter().map(|s| (s.addr(), s.ports)).collect();
        let result = spawn_all(&servers, &peers, opts, install, quorum)
            .map_err(StartError::Failed)
            .and_then(|()| wait_serving(&servers, &(0..n).collect::<Vec<_>>(), quorum, deadline));
        match result {
            Ok(()) => return Ok(servers),
            Err(e) => {
                for s in &servers {
                    let _ = s.signal_and_wait(libc::SIGKILL, KILL_GRACE);
                }
                match e {
                    StartError::PortClash if attempt < START_ATTEMPTS => {
                        tracing::info!("a ZooKeeper port was taken meanwhile; starting again on new ports");
                        for s in &servers {
                            let _ = std::fs::remove_dir_all(&s.dir);
                        }
                    }
                    StartError::PortClash => {
                        return Err(Error::new("ZooKeeper servers kept losing their ports to other processes"))
                    }
                    StartError::Failed(e) => return Err(e),
                }
            }
        }
    }
    unreachable!("the last attempt returns")
}

fn spawn_all(
    servers: &[Server],
    peers: &[(Ipv4Addr, Ports)],
    opts: &Options,
    install: &Install,
    quorum: bool,
) -> Result<()> {
    for s in servers {
        s.write_config(opts, if quorum { peers } else { &[] })?;
    }
    for s in servers {
        s.spawn(install, opts, quorum)?;
    }
    Ok(())
}

/// Free loopback ports: client, quorum, election and secure client for each server. All are
/// bound at once (so they differ), then released for the servers to take.
fn free_ports(n: usize) -> Result<Vec<Ports>> {
    let listeners =
        (0..4 * n).map(|_| TcpListener::bind((Ipv4Addr::LOCALHOST, 0))).collect::<std::io::Result<Vec<_>>>()?;
    let ports = listeners.iter().map(|l| l.local_addr().map(|a| a.port())).collect::<std::io::Result<Vec<_>>>()?;
    Ok(ports.chunks(4).map(|c| Ports { client: c[0], quorum: c[1], election: c[2], secure: c[3] }).collect())
}

/// Polls `mntr` until every server in `which` serves requests (standalone,
/// or leader/follower/observer in an ensemble), one exits, or `deadline` passes.
pub(crate) fn wait_serving(
    servers: &[Server],
    which: &[usize],
    quorum: bool,
    deadline: Instant,
) -> std::result::Result<(), StartError> {
    let ready = |state: &str| {
        if quorum {
            matches!(state, "leader" | "follower" | "observer")
        } else {
            state == "standalone"
        }
    };
    let mut round = 0u32;
    loop {
        let mut pending = Vec::new();
        for &i in which {
            let s = &servers[i];
            match s.probe() {
                Probe::Serving(state) if ready(&state) => {}
                Probe::Stopped => {}
                Probe::Exited(status) => {
                    if s.log_shows_port_clash() {
                        return Err(StartError::PortClash);
                    }
                    return Err(StartError::Failed(Error::new(format!(
                        "ZooKeeper server {i} exited ({status}) before serving requests; log: {}\n{}",
                        s.log_path().display(),
                        s.log_tail(15)
                    ))));
                }
                Probe::Serving(_) | Probe::NotServing => pending.push(i),
            }
        }
        if pending.is_empty() {
            return Ok(());
        }
        round += 1;
        // A quorum or election port clash does not end the JVM: look in the logs.
        if round % 20 == 0 && pending.iter().any(|&i| servers[i].log_shows_port_clash()) {
            return Err(StartError::PortClash);
        }
        if Instant::now() >= deadline {
            let logs: Vec<String> =
                pending.iter().map(|&i| format!("server {i}: {}", servers[i].log_path().display())).collect();
            return Err(StartError::Failed(Error::new(format!(
                "ZooKeeper not serving requests in time (still waiting for {}); logs: {}",
                pending.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(", "),
                logs.join(", ")
            ))));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
