//! Costs and durations read the same in `mctl` and in the app: both test suites check their
//! formatter on the cases of `tests/fixtures/format/cases.json` (the app's in
//! `ui/src/lib/format.test.ts`).
use mission_control::model::{cost_text, duration_text};
use serde_json::Value;

fn cases() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/format/cases.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn costs_read_as_the_shared_cases_say() {
    let cases = cases();
    let cost = cases["cost"].as_array().unwrap();
    assert!(cost.len() > 5);
    for case in cost {
        let (usd, estimated, want) = (case[0].as_f64(), case[1].as_bool().unwrap(), &case[2]);
        assert_eq!(cost_text(usd, estimated), want.as_str().unwrap(), "{case}");
    }
}

#[test]
fn durations_read_as_the_shared_cases_say() {
    let cases = cases();
    let duration = cases["duration"].as_array().unwrap();
    assert!(duration.len() > 5);
    for case in duration {
        assert_eq!(
            duration_text(case[0].as_f64()),
            case[1].as_str().unwrap(),
            "{case}"
        );
    }
}
