//! kazoo's NonBlockingLease and MultiNonBlockingLease: one try under a kazoo
//! Lock, the holder and end in `lease_holder` as kazoo's JSON, by the clock
//! the caller gives (no test waits for a lease to run out).

mod common;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::*;
use zoolock::{try_lease, try_multi_lease, ErrorKind};

fn at(secs: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(secs)
}

const NOW: u64 = 1_795_734_000; // 2026-11-26T23:00:00 UTC
const HOUR: Duration = Duration::from_secs(3600);

#[tokio::test(flavor = "multi_thread")]
async fn one_holder_until_its_end_renewals_and_kazoos_record() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let session = session(&connect).await;
    let path = unique_path("lease");
    assert!(try_lease(&session, &path, HOUR, "a", at(NOW)).await.unwrap());
    let holder = format!("{path}/lease_holder");
    assert_eq!(
        raw.get_data(&holder).await.unwrap().0,
        br#"{"version": 1, "holder": "a", "end": "2026-11-27T00:00:00"}"#
    );
    assert!(!try_lease(&session, &path, HOUR, "b", at(NOW + 3599)).await.unwrap(), "held by a until its end");
    assert!(try_lease(&session, &path, HOUR, "a", at(NOW + 1800)).await.unwrap(), "a renews");
    assert!(!try_lease(&session, &path, HOUR, "b", at(NOW + 3600)).await.unwrap(), "renewed to 00:30");
    assert!(try_lease(&session, &path, HOUR, "b", at(NOW + 5400)).await.unwrap(), "b after a's end");
    assert_eq!(
        raw.get_data(&holder).await.unwrap().0,
        br#"{"version": 1, "holder": "b", "end": "2026-11-27T01:30:00"}"#
    );
    // Only the serialising lock's node came and went.
    assert_eq!(raw.list_children(&path).await.unwrap(), ["lease_holder"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_multi_lease_admits_count_holders() {
    let connect = shared_server();
    let session = session(&connect).await;
    let path = unique_path("multi-lease");
    for (id, obtained) in [("a", true), ("b", true), ("c", false), ("a", true)] {
        assert_eq!(try_multi_lease(&session, 2, &path, HOUR, id, at(NOW)).await.unwrap(), obtained, "{id}");
    }
    assert!(try_multi_lease(&session, 2, &path, HOUR, "c", at(NOW + 3600)).await.unwrap(), "after the ends");
}

#[tokio::test(flavor = "multi_thread")]
async fn another_version_is_left_alone_and_garbage_is_bad_data() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let session = session(&connect).await;
    let path = unique_path("lease-bad");
    assert!(try_lease(&session, &path, HOUR, "a", at(NOW)).await.unwrap());
    let holder = format!("{path}/lease_holder");
    raw.set_data(&holder, br#"{"version": 2, "anything": []}"#, None).await.unwrap();
    assert!(!try_lease(&session, &path, HOUR, "a", at(NOW)).await.unwrap(), "a later format is not ours to take");
    raw.set_data(&holder, b"not json", None).await.unwrap();
    let err = try_lease(&session, &path, HOUR, "a", at(NOW)).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::BadData, "{err:?}");
    assert_eq!(raw.list_children(&path).await.unwrap(), ["lease_holder"], "the lock released after the error");
    assert_eq!(try_lease(&session, "relative", HOUR, "a", at(NOW)).await.unwrap_err().kind(), ErrorKind::InvalidPath);
}
