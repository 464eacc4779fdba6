//! The Settings view's rule, through the service the app and `mctl serve` run: what is saved
//! is kept whole, and applies now only where the command line and the environment do not
//! decide; a server has no settings to save.

use mission_control::service::prefs::{self, Given, SavedSettings, Theme};
use mission_control::service::{Allowed, Service};
use mission_control::wire::{DirsSource, SetRunsDirsRequest};
use mission_control::ErrorCode;

fn app(given: &Given, env: &[(&str, &str)], file: &std::path::Path) -> Service {
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let (saved, warning) = prefs::load(file);
    assert_eq!(warning, None);
    let settings = prefs::resolve(
        given,
        |k| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()),
        saved,
    );
    Service::new(settings, Allowed::ALL).with_settings_file(file)
}

#[test]
fn a_saved_setting_applies_where_no_flag_or_variable_decides_and_is_kept_where_one_does() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    std::fs::create_dir(&runs).unwrap();
    let file = dir.path().join("config").join("settings.json");
    let given = Given {
        threshold: Some(4096),
        ..Given::default()
    };
    let svc = app(&given, &[(prefs::ENV_GC_IDLE_GUARD, "1m")], &file);
    let saved = SavedSettings {
        runs_dirs: vec![runs.to_string_lossy().into_owned()],
        threshold: Some(8192),
        running_window_ms: Some(120_000),
        gc_idle_guard_ms: Some(300_000),
        theme: Theme::Dark,
        ..SavedSettings::default()
    };
    let s = svc.save_settings(saved.clone()).unwrap();
    // The flag and the variable win; the rest is the saved value, in effect at once.
    assert_eq!((s.threshold, s.sources.threshold), (4096, DirsSource::Cli));
    assert_eq!(
        (s.gc_idle_guard_ms, s.sources.gc_idle_guard),
        (60_000, DirsSource::Env)
    );
    assert_eq!(
        (s.running_window_ms, s.sources.running_window),
        (120_000, DirsSource::Saved)
    );
    assert_eq!((s.theme, s.sources.theme), (Theme::Dark, DirsSource::Saved));
    assert_eq!(s.runs_dirs, saved.runs_dirs);
    assert_eq!(s.saved, saved, "what the view shows as saved");
    assert_eq!(svc.current().running_window_ms, 120_000);

    // Saved whole: the next start without the flag and the variable uses every saved value.
    let next = app(&Given::default(), &[], &file).current();
    assert_eq!((next.threshold, next.gc_idle_guard_ms), (8192, 300_000));
    assert_eq!(next.sources.threshold, DirsSource::Saved);

    // Choosing directories keeps the other saved settings.
    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    let dirs = vec![other.to_string_lossy().into_owned()];
    svc.set_runs_dirs(SetRunsDirsRequest { dirs: dirs.clone() })
        .unwrap();
    let (kept, _) = prefs::load(&file);
    assert_eq!(
        kept,
        SavedSettings {
            runs_dirs: dirs,
            ..saved
        }
    );

    // Clearing a saved value goes back to the default.
    let s = svc
        .save_settings(SavedSettings {
            running_window_ms: None,
            ..kept
        })
        .unwrap();
    assert_eq!(
        (s.running_window_ms, s.sources.running_window),
        (30 * 60_000, DirsSource::Default)
    );
    svc.stop();
}

#[test]
fn bad_values_are_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("settings.json");
    let svc = app(&Given::default(), &[], &file);
    for bad in [
        SavedSettings {
            threshold: Some(0),
            ..Default::default()
        },
        SavedSettings {
            running_window_ms: Some(-1),
            ..Default::default()
        },
    ] {
        assert_eq!(svc.save_settings(bad).unwrap_err().code, ErrorCode::Invalid);
    }
    assert!(!file.exists());
}

#[test]
fn a_server_has_no_settings_to_save() {
    let settings = mission_control::service::settings(vec![], DirsSource::Cli, 20_480);
    let svc = Service::new(
        settings,
        Allowed {
            changes: true,
            desktop: false,
        },
    );
    let err = svc.save_settings(SavedSettings::default()).unwrap_err();
    assert_eq!(err.code, ErrorCode::Forbidden);
}

#[test]
fn a_warning_about_an_unreadable_file_goes_once_a_save_replaces_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("settings.json");
    std::fs::write(&file, "{not json").unwrap();
    let (saved, warning) = prefs::load(&file);
    let mut settings = prefs::resolve(&Given::default(), |_| None, saved);
    settings.warnings.extend(warning);
    assert_eq!(settings.warnings.len(), 1, "{:?}", settings.warnings);
    let svc = Service::new(settings, Allowed::ALL).with_settings_file(&file);
    let s = svc.save_settings(SavedSettings::default()).unwrap();
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    assert_eq!(prefs::load(&file), (SavedSettings::default(), None));
}

#[test]
fn without_a_config_directory_the_settings_apply_and_say_they_are_not_kept() {
    let settings = prefs::resolve(&Given::default(), |_| None, SavedSettings::default());
    let svc = Service::new(settings, Allowed::ALL);
    let saved = SavedSettings {
        threshold: Some(4096),
        ..Default::default()
    };
    let s = svc.save_settings(saved).unwrap();
    assert_eq!(s.threshold, 4096);
    assert!(
        s.warnings
            .iter()
            .any(|w| w.contains("they apply until the app closes")),
        "{:?}",
        s.warnings
    );
    svc.stop();
}

#[test]
fn a_kind_chosen_for_a_directory_is_saved_and_read_as_such_now_and_at_the_next_start() {
    use mission_control::sources::SourceKind;
    let _declaring = crate::support::declared_kinds_lock();
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    std::fs::create_dir_all(&store).unwrap();
    let store_s = store.to_string_lossy().into_owned();
    let file = dir.path().join("config").join("settings.json");
    let svc = app(&Given::default(), &[], &file);
    assert_eq!(
        svc.runs_dir(&store_s).err().map(|e| e.code),
        Some(ErrorCode::Invalid)
    );
    let saved = SavedSettings {
        runs_dirs: vec![store_s.clone()],
        dir_kinds: [(store_s.clone(), SourceKind::Codex)].into_iter().collect(),
        ..SavedSettings::default()
    };
    svc.save_settings(saved).unwrap();
    // An empty directory says nothing of itself: detected, it would be a runs directory.
    assert_eq!(svc.runs_dir(&store_s).unwrap().source(), SourceKind::Codex);
    drop(svc);
    let again = app(&Given::default(), &[], &file);
    assert_eq!(again.current().saved.dir_kinds[&store_s], SourceKind::Codex);
    assert_eq!(
        again.runs_dir(&store_s).unwrap().source(),
        SourceKind::Codex
    );
    mission_control::sources::force_kinds(std::iter::empty());
}
