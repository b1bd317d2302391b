//! `partwise completions` and the man page: both from the flags.

use crate::common::{fails, partwise, temp_file};

#[test]
fn completions_and_man_page_come_from_the_flags() {
    for shell in ["bash", "zsh", "fish"] {
        let out = partwise().args(["completions", shell]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{shell}");
        let text = String::from_utf8(out.stdout).unwrap();
        // Generated from clap: the newest flags are in them.
        assert!(
            text.contains("only-differ") && text.contains("route"),
            "{shell}"
        );
    }
    // The bash script is valid bash.
    let f = temp_file(
        &partwise()
            .args(["completions", "bash"])
            .output()
            .unwrap()
            .stdout,
    );
    let status = std::process::Command::new("bash")
        .args(["-n", f.path().to_str().unwrap()])
        .status()
        .unwrap();
    assert!(status.success());
    let man = String::from_utf8(partwise().arg("man").output().unwrap().stdout).unwrap();
    assert!(man.contains(".TH partwise 1"), "{man}");
    let route =
        String::from_utf8(partwise().args(["man", "route"]).output().unwrap().stdout).unwrap();
    assert!(
        route.contains(".TH partwise-route 1") && route.contains("only\\-differ"),
        "{route}"
    );
    assert!(fails(&["man", "nope"]).contains("'nope'"));
    fails(&["completions", "tcsh"]);
}
