//! Temporary directories named `zkh-<pid>-<n>` under the system temp dir.
//! The shared server's directory outlives its process (statics are never
//! dropped), so each process first removes the ones left by dead processes.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Once;

const PREFIX: &str = "zkh-";

pub(crate) fn create() -> std::io::Result<PathBuf> {
    static CLEANED: Once = Once::new();
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let tmp = std::env::temp_dir();
    CLEANED.call_once(|| remove_stale(&tmp));
    let pid = std::process::id();
    loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = tmp.join(format!("{PREFIX}{pid}-{n}"));
        match std::fs::create_dir(&dir) {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            r => return r.map(|_| dir),
        }
    }
}

fn remove_stale(tmp: &Path) {
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix(PREFIX)).and_then(|r| r.split('-').next()) else {
            continue;
        };
        let Ok(pid) = pid.parse::<libc::pid_t>() else {
            continue;
        };
        // SAFETY: signal 0 only checks whether the process exists.
        let dead =
            unsafe { libc::kill(pid, 0) } != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        if dead {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}
