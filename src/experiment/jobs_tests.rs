use super::*;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "trellis-jobs-{name}-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::remove_dir_all(&d).ok();
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn keys(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("job{i}")).collect()
}

/// A job whose result has awkward floats: -inf, NaN with a payload, subnormals.
fn job(i: usize) -> Result<(String, Vec<f64>)> {
    let x = i as f64;
    Ok((
        format!("r{i}"),
        vec![
            x.sqrt() * std::f64::consts::PI,
            f64::NEG_INFINITY,
            f64::from_bits(0x7ff8_0000_0000_0000 | i as u64),
            f64::MIN_POSITIVE / 3.0,
            -0.0,
        ],
    ))
}

fn bits(v: &[Done<(String, Vec<f64>)>]) -> Vec<(String, Vec<u64>)> {
    v.iter()
        .map(|d| {
            (
                d.value.0.clone(),
                d.value.1.iter().map(|x| x.to_bits()).collect(),
            )
        })
        .collect()
}

#[test]
fn shard_parses_and_owns_a_round_robin_part() {
    let s: Shard = "1/3".parse().unwrap();
    assert_eq!(s, Shard { index: 1, count: 3 });
    assert_eq!((0..7).filter(|&j| s.owns(j)).collect::<Vec<_>>(), [1, 4]);
    for bad in ["3/3", "1", "a/3", "0/0", "-1/2"] {
        let e = bad.parse::<Shard>().unwrap_err();
        assert!(e.contains("I/N") && !e.contains('\n'), "{e}");
    }
    assert_eq!(
        s.folder(Path::new("results/board")),
        Path::new("results/board.shard-1-of-3")
    );
}

#[test]
fn a_resumed_run_reads_finished_jobs_bit_for_bit_and_computes_none() {
    let d = tmp("resume");
    let j = d.join(".x.journal");
    let reference = bits(
        &Jobs::in_memory()
            .run("s", &keys(9), Mode::Parallel, job)
            .unwrap(),
    );
    let first = Jobs::journalled(&j, "h1", None).unwrap();
    let a = first.run("s", &keys(9), Mode::Parallel, job).unwrap();
    assert_eq!(first.computed(), 9);
    assert_eq!(bits(&a), reference);
    drop(first);
    let again = Jobs::journalled(&j, "h1", None).unwrap();
    let calls = AtomicUsize::new(0);
    let b = again
        .run("s", &keys(9), Mode::OneAtATime, |i| {
            calls.fetch_add(1, Ordering::Relaxed);
            job(i)
        })
        .unwrap();
    assert_eq!(calls.load(Ordering::Relaxed), 0);
    assert_eq!((again.computed(), again.reused()), (0, 9));
    assert_eq!(bits(&b), reference);
    assert!(b.iter().all(|d| d.reused));
    // The recorded wall times come back too.
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.seconds.to_bits(), y.seconds.to_bits());
    }
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn a_torn_record_is_dropped_and_its_job_recomputed() {
    let d = tmp("torn");
    let j = d.join(".x.journal");
    let first = Jobs::journalled(&j, "h", None).unwrap();
    first.run("s", &keys(4), Mode::OneAtATime, job).unwrap();
    drop(first);
    // A kill in the middle of the last write: cut the file inside its last record.
    let len = std::fs::metadata(&j).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&j)
        .unwrap()
        .set_len(len - 5)
        .unwrap();
    let again = Jobs::journalled(&j, "h", None).unwrap();
    let out = again.run("s", &keys(4), Mode::Parallel, job).unwrap();
    assert_eq!((again.computed(), again.reused()), (1, 3));
    assert!(!out[3].reused);
    drop(again);
    // The repaired journal holds all four now.
    let third = Jobs::journalled(&j, "h", None).unwrap();
    third.run("s", &keys(4), Mode::Parallel, job).unwrap();
    assert_eq!(third.computed(), 0);
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn a_journal_of_another_run_is_never_served() {
    let d = tmp("stale");
    let j = d.join(".x.journal");
    Jobs::journalled(&j, "old", None)
        .unwrap()
        .run("s", &keys(3), Mode::Parallel, job)
        .unwrap();
    let new = Jobs::journalled(&j, "new", None).unwrap();
    new.run("s", &keys(3), Mode::Parallel, job).unwrap();
    assert_eq!((new.computed(), new.reused()), (3, 0));
    // Garbage is not a journal either, and not this program's: refused, never emptied.
    std::fs::write(&j, b"not a journal at all").unwrap();
    let e = Jobs::journalled(&j, "new", None).err().unwrap().to_string();
    assert!(e.contains("not a journal this program wrote"), "{e}");
    assert_eq!(std::fs::read(&j).unwrap(), b"not a journal at all");
    // An empty file holds nothing to lose: a journal starts there.
    std::fs::write(&j, b"").unwrap();
    let g = Jobs::journalled(&j, "new", None).unwrap();
    g.run("s", &keys(2), Mode::Parallel, job).unwrap();
    assert_eq!(g.computed(), 2);
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn shards_compute_disjoint_parts_and_their_journals_merge_into_the_single_run() {
    let d = tmp("shards");
    let n = 3;
    let reference = bits(
        &Jobs::in_memory()
            .run("s", &keys(10), Mode::Parallel, job)
            .unwrap(),
    );
    let mut journals = Vec::new();
    let mut total = 0;
    for i in 0..n {
        let p = d.join(format!("shard{i}.journal"));
        let jobs = Jobs::journalled(&p, "h", Some(Shard { index: i, count: n })).unwrap();
        let e = jobs
            .run("s", &keys(10), Mode::Parallel, job)
            .expect_err("a shard stops after its part");
        assert!(e.is::<ShardStop>());
        assert_eq!(jobs.computed(), (0..10).filter(|j| j % n == i).count());
        total += jobs.computed();
        journals.push(p);
    }
    assert_eq!(total, 10);
    let mut merged = Jobs::journalled(&d.join("merge.journal"), "h", None).unwrap();
    assert_eq!(merged.preload_shards(&journals, "h").unwrap(), 10);
    let out = merged
        .run(
            "s",
            &keys(10),
            Mode::Parallel,
            |_| -> Result<(String, Vec<f64>)> { panic!("a merged job must not be recomputed") },
        )
        .unwrap();
    assert_eq!(bits(&out), reference);
    assert_eq!(merged.computed(), 0);
    // A later stage of the kind runs at the merge.
    let later = merged.run("t", &keys(2), Mode::Parallel, job).unwrap();
    assert_eq!((later.len(), merged.computed()), (2, 2));
    // A shard of another run is refused, in one line.
    let mut other = Jobs::in_memory();
    let e = other
        .preload_shards(&journals[..1], "other")
        .unwrap_err()
        .to_string();
    assert!(e.contains("re-run that shard") && !e.contains('\n'), "{e}");
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn a_failing_job_ends_the_stage_and_keeps_the_finished_ones() {
    let d = tmp("fail");
    let j = d.join(".x.journal");
    let jobs = Jobs::journalled(&j, "h", None).unwrap();
    let e = jobs
        .run("s", &keys(5), Mode::OneAtATime, |i| {
            if i == 3 {
                anyhow::bail!("job 3 broke")
            }
            job(i)
        })
        .unwrap_err();
    assert!(e.to_string().contains("job 3 broke"));
    drop(jobs);
    let again = Jobs::journalled(&j, "h", None).unwrap();
    again.run("s", &keys(5), Mode::OneAtATime, job).unwrap();
    assert_eq!((again.computed(), again.reused()), (2, 3));
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn duplicate_keys_and_repeated_stages_are_refused() {
    let jobs = Jobs::in_memory();
    let dup = vec!["a".to_string(), "a".to_string()];
    let e = jobs
        .run("s", &dup, Mode::Parallel, job)
        .unwrap_err()
        .to_string();
    assert!(e.contains("\"a\" appears twice"), "{e}");
    jobs.run("t", &keys(1), Mode::Parallel, job).unwrap();
    let e = jobs
        .run("t", &keys(1), Mode::Parallel, job)
        .unwrap_err()
        .to_string();
    assert!(e.contains("run twice"), "{e}");
}
