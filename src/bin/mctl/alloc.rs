//! `mctl`'s memory allocator: mimalloc, started with options that give freed memory back to the
//! system at once.
//!
//! A warm `mctl runs` decodes and prints thousands of runs of a few dozen small strings each:
//! it spent about a sixth of its time in glibc's `malloc` and `free`, and takes 6-7 % less with
//! mimalloc. Left to its defaults, mimalloc keeps what is freed for reuse (its arenas committed
//! as they are made, purged a second later): a cold listing of 5,000 Claude Code sessions
//! peaked at 83 MiB instead of 27. With its arenas committed on demand and purged at once, 29.5
//! MiB, growing more slowly than glibc's heap with the number of runs (docs/performance.md).
//!
//! Those options must be set before mimalloc starts (its first arena is made then, before
//! `main`, and keeps the options it was made with): a constructor sets them as mimalloc's
//! defaults, ahead of mimalloc's own (a priority of 101 runs before constructors without
//! one). `MIMALLOC_ARENA_EAGER_COMMIT` and `MIMALLOC_PURGE_DELAY` in the environment still
//! override them, as they override mimalloc's own defaults.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The mimalloc whose options' places this knows (`MI_MALLOC_VERSION`): the binding names
/// neither option, and another mimalloc may have moved them (`tests/it` checks their names).
const KNOWN_VERSION: i32 = 30302;
/// `mi_option_arena_eager_commit`: 0, an arena's memory is committed as it is used.
const ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;
/// `mi_option_purge_delay`: 0, freed memory is given back at once (1,000 ms by default).
const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array.00101"]
static SET_DEFAULTS: extern "C" fn() = set_defaults;

/// Sets the options' defaults, when this is the mimalloc whose places they are.
extern "C" fn set_defaults() {
    // SAFETY: `mi_version` reads a constant, and `mi_option_set_default` writes the option's
    // entry in a static table (nothing is allocated, nothing else runs yet).
    unsafe {
        if libmimalloc_sys::mi_version() == KNOWN_VERSION {
            libmimalloc_sys::mi_option_set_default(ARENA_EAGER_COMMIT, 0);
            libmimalloc_sys::mi_option_set_default(PURGE_DELAY, 0);
        }
    }
}
