//! A release `mctl` embeds the built UI (`ui/dist`, served by `mctl serve`): build it again
//! when the UI changes. Debug builds read `ui/dist` from disk when serving, so a UI rebuild
//! does not rebuild the core in the test suite.
fn main() {
    if std::env::var("PROFILE").as_deref() == Ok("release") {
        println!("cargo:rerun-if-changed=ui/dist");
    } else {
        println!("cargo:rerun-if-changed=build.rs");
    }
}
