//! CPU time from `/proc`, for measurements that must say what they cost:
//! the bench's server, contestants and relay.

/// User+system CPU seconds in a `/proc` stat file: a process's
/// (`/proc/<pid>/stat`) or one thread's (`/proc/<pid>/task/<tid>/stat`).
/// `None` if it cannot be read (the process or thread is gone).
pub fn cpu_seconds(stat_path: &str) -> Option<f64> {
    let stat = std::fs::read_to_string(stat_path).ok()?;
    // The command may hold anything, a ')' too: the fields start after its last one.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    // utime and stime, fields 14 and 15 of the whole line.
    let ticks = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    // SAFETY: sysconf has no preconditions.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1);
    Some(ticks / per_second as f64)
}
