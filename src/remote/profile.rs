//! The AWS profile files, as the AWS CLI reads them, for what the environment does not give:
//! `~/.aws/credentials` (or `$AWS_SHARED_CREDENTIALS_FILE`) for the keys, `~/.aws/config` (or
//! `$AWS_CONFIG_FILE`) for the region and the endpoint, of the profile `$AWS_PROFILE` names
//! (else `default`). A desktop app started from a menu has no AWS variables: this is how it
//! finds the credentials a user already set up with `aws configure`.
//!
//! Static keys only: a profile that gets its credentials another way (SSO, `credential_process`,
//! a role to assume) gives none here, and the environment must (see docs/object-storage.md).

use ini::Ini;
use std::path::{Path, PathBuf};

/// What one profile gives.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct Profile {
    pub access_key_id: Option<String>,
    pub secret_access_key: Option<String>,
    pub session_token: Option<String>,
    pub region: Option<String>,
    pub endpoint_url: Option<String>,
}

/// The profile the environment names, read from the files the environment names (or their
/// places in the home directory). A missing or unreadable file gives nothing.
pub(super) fn load() -> Profile {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let name = var("AWS_PROFILE")
        .or_else(|| var("AWS_DEFAULT_PROFILE"))
        .unwrap_or_else(|| "default".to_owned());
    let home = dirs::home_dir();
    let place = |var_name: &str, file: &str| -> Option<PathBuf> {
        var(var_name)
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(".aws").join(file)))
    };
    read(
        place("AWS_SHARED_CREDENTIALS_FILE", "credentials").as_deref(),
        place("AWS_CONFIG_FILE", "config").as_deref(),
        &name,
    )
}

/// Profile `name` of these files. The credentials file names a profile `[name]`; the config
/// file `[profile name]`, or `[default]`. Keys may sit in either, the credentials file winning.
fn read(credentials: Option<&Path>, config: Option<&Path>, name: &str) -> Profile {
    let load = |p: Option<&Path>| p.and_then(|p| Ini::load_from_file(p).ok());
    let credentials = load(credentials);
    let config = load(config);
    let from_credentials = credentials.as_ref().and_then(|i| i.section(Some(name)));
    let config_section = if name == "default" {
        "default".to_owned()
    } else {
        format!("profile {name}")
    };
    let from_config = config
        .as_ref()
        .and_then(|i| i.section(Some(config_section.as_str())));
    let get = |key: &str| {
        from_credentials
            .and_then(|s| s.get(key))
            .or_else(|| from_config.and_then(|s| s.get(key)))
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    Profile {
        access_key_id: get("aws_access_key_id"),
        secret_access_key: get("aws_secret_access_key"),
        session_token: get("aws_session_token"),
        region: get("region"),
        endpoint_url: get("endpoint_url"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_profile_takes_keys_from_credentials_and_region_from_config() {
        let dir = tempfile::tempdir().unwrap();
        let credentials = dir.path().join("credentials");
        let config = dir.path().join("config");
        std::fs::write(
            &credentials,
            "[default]\naws_access_key_id = AKDEFAULT\naws_secret_access_key = SKDEFAULT\n\n\
             # the team's store\n[team]\naws_access_key_id=AKTEAM\naws_secret_access_key=SKTEAM\n",
        )
        .unwrap();
        std::fs::write(
            &config,
            "[default]\nregion = eu-west-1\n\n[profile team]\nregion = us-east-2\n\
             endpoint_url = http://minio.internal:9000\n",
        )
        .unwrap();
        let team = read(Some(&credentials), Some(&config), "team");
        assert_eq!(team.access_key_id.as_deref(), Some("AKTEAM"));
        assert_eq!(team.secret_access_key.as_deref(), Some("SKTEAM"));
        assert_eq!(team.session_token, None);
        assert_eq!(team.region.as_deref(), Some("us-east-2"));
        assert_eq!(
            team.endpoint_url.as_deref(),
            Some("http://minio.internal:9000")
        );
        let default = read(Some(&credentials), Some(&config), "default");
        assert_eq!(default.access_key_id.as_deref(), Some("AKDEFAULT"));
        assert_eq!(default.region.as_deref(), Some("eu-west-1"));
        assert_eq!(default.endpoint_url, None);
    }

    #[test]
    fn missing_files_and_profiles_give_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope");
        assert_eq!(read(Some(&missing), None, "team"), Profile::default());
        let config = dir.path().join("config");
        std::fs::write(&config, "[profile other]\nregion = us-east-2\n").unwrap();
        assert_eq!(read(None, Some(&config), "team"), Profile::default());
        // Not an INI file at all: nothing, not a failure.
        std::fs::write(&config, "[unclosed\n\u{0}").unwrap();
        assert_eq!(read(None, Some(&config), "team"), Profile::default());
    }
}
