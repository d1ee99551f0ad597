//! The contestant command line of bench/contestants/PROTOCOL.md.

use std::time::Duration;

pub struct Args {
    pub connect: String,
    pub path: String,
    pub scenario: String,
    pub sessions: usize,
    pub locks: usize,
    pub waiters: usize,
    pub seconds: Duration,
}

impl Args {
    pub fn parse(args: &[String]) -> Result<Args, String> {
        let mut parsed = Args {
            connect: String::new(),
            path: String::new(),
            scenario: String::new(),
            sessions: 1,
            locks: 64,
            waiters: 10_000,
            seconds: Duration::from_secs(3),
        };
        let mut rest = args.iter();
        while let Some(flag) = rest.next() {
            let value = rest.next().ok_or_else(|| format!("{flag} needs a value"))?;
            let number = || value.parse::<usize>().map_err(|_| format!("{flag}: not a number: {value}"));
            match flag.as_str() {
                "--connect" => parsed.connect = value.clone(),
                "--path" => parsed.path = value.clone(),
                "--scenario" => parsed.scenario = value.clone(),
                "--sessions" => parsed.sessions = number()?,
                "--locks" => parsed.locks = number()?,
                "--waiters" => parsed.waiters = number()?,
                "--seconds" => {
                    let secs = value.parse::<f64>().map_err(|_| format!("--seconds: not a number: {value}"))?;
                    parsed.seconds = Duration::try_from_secs_f64(secs).map_err(|e| format!("--seconds: {e}"))?;
                }
                _ => return Err(format!("unknown flag {flag}")),
            }
        }
        if parsed.connect.is_empty() || parsed.path.is_empty() || parsed.scenario.is_empty() {
            return Err("--connect, --path and --scenario are required".into());
        }
        Ok(parsed)
    }
}
