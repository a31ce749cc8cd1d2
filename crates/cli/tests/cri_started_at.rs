//! The containers' CRI `started_at` (`node::gather::StartedAt`) against a real containerd: read
//! with `ContainerStatus` once per container and then from the cache, a container still
//! `CONTAINER_CREATED` asked again until it starts, a removed one dropped, at most
//! `max_calls_per_read` calls a read.

use std::sync::Mutex;

use podcoroner_node::gather::{StartedAt, read_cri};
use podcoroner_test_support::{ContainerdLab, PodSpec};

mod common;
use common::ok;

/// One read through `cache`: the containers by name with their `started_at`, and how many
/// `ContainerStatus` calls it made.
async fn read(
    client: &podcoroner_cri::RuntimeClient,
    cache: &mut StartedAt,
) -> (Vec<(String, Option<jiff::Timestamp>)>, usize) {
    let calls = Mutex::new(0);
    let (cri, status) = ok(read_cri(
        client,
        |rpc, _| {
            if rpc == "ContainerStatus" {
                *calls.lock().unwrap() += 1;
            }
        },
        Some(cache),
    )
    .await);
    assert!(
        !status.counts.contains_key("container_status_failed"),
        "{status:?}"
    );
    let mut by_name: Vec<(String, Option<jiff::Timestamp>)> = cri
        .containers
        .iter()
        .map(|c| (c.name.clone(), c.started_at))
        .collect();
    by_name.sort();
    (by_name, calls.into_inner().unwrap())
}

#[tokio::test]
async fn started_at_is_asked_once_per_container() {
    let lab = ok(ContainerdLab::start());
    let pod = PodSpec::api("shop", "web-0", "3f6d2a1c-5b7e-4c9d-8e2f-1a0b9c8d7e61");
    let sandbox = ok(lab.run_pod(&pod).await);
    let running = ok(lab.create_container(&sandbox, &pod, "app", 0, true).await);
    let created = ok(lab.create_container(&sandbox, &pod, "side", 0, false).await);
    let client = ok(podcoroner_cri::RuntimeClient::connect(
        &lab.endpoint(),
        std::time::Duration::from_secs(10),
    )
    .await);
    // What crictl inspect shows: ContainerStatus.started_at.
    let truth = ok(client.container_status(&running).await).started_at;
    assert!(truth.is_some());

    let mut cache = StartedAt::for_agent();
    let (first, calls) = read(&client, &mut cache).await;
    assert_eq!(calls, 2, "both containers asked");
    assert_eq!(
        first,
        vec![("app".to_string(), truth), ("side".to_string(), None)]
    );
    // The started one is kept; the created one is asked again.
    assert_eq!(cache.len(), 1);
    let (again, calls) = read(&client, &mut cache).await;
    assert_eq!((again, calls), (first.clone(), 1));

    // Once it starts, its started_at is read and kept too: no more calls.
    ok(lab.start_container(&created).await);
    let (started, calls) = read(&client, &mut cache).await;
    assert_eq!(calls, 1);
    let side = started[1].1.expect("side started");
    assert!(side >= truth.unwrap(), "{started:?}");
    let (_, calls) = read(&client, &mut cache).await;
    assert_eq!(calls, 0);
    assert_eq!(cache.len(), 2);

    // A container removed leaves the cache at the next read.
    ok(lab.stop_container(&running).await);
    ok(lab.remove_container(&running).await);
    let (left, calls) = read(&client, &mut cache).await;
    assert_eq!((left.len(), calls, cache.len()), (1, 0, 1));

    // At most max_calls_per_read calls a read, newest first; the rest at the next reads.
    for name in ["a", "b", "c"] {
        ok(lab.create_container(&sandbox, &pod, name, 0, true).await);
    }
    let mut small = StartedAt::with_max_calls(2);
    let (_, calls) = read(&client, &mut small).await;
    assert_eq!((calls, small.len()), (2, 2));
    let (all, calls) = read(&client, &mut small).await;
    assert_eq!((calls, small.len()), (2, 4));
    assert!(all.iter().all(|(_, t)| t.is_some()), "{all:?}");
}
