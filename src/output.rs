//! Files written by the front ends (`run`, `bench` and the app's recording): checks made
//! before any work starts, atomic writes, PNG charts and the font they use.
//!
//! What a write does to what is already at its path:
//!
//! - nothing there, or a regular file: the new contents go to a temporary file beside it
//!   (`.NAME.PID.N.tmp`, unique per process and write, removed if anything fails) and are
//!   renamed over it, so a reader never sees half a file;
//! - a symbolic link: it is followed; the file it points to is written as above and the
//!   link stays a link (a dangling link is refused);
//! - something that is neither a file nor a directory (`/dev/null`, a FIFO, a terminal): it is
//!   opened and written through, never renamed over or removed;
//! - a directory, or a path that ends in `/`: refused.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The font the PNG charts use (DejaVu Sans, bundled).
pub const FONT: &[u8] = include_bytes!("../assets/fonts/DejaVuSans.ttf");

/// Error type of the chart-drawing helpers.
pub type PlotResult = Result<(), Box<dyn std::error::Error>>;

/// Register [`FONT`] as plotters' `sans-serif` (idempotent).
pub fn register_font() {
    let _ = plotters::style::register_font("sans-serif", plotters::style::FontStyle::Normal, FONT);
}

/// Where the bytes for `path` end up.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    /// A regular file (or none yet) at this path, symbolic links resolved: replace it by
    /// renaming a temporary file over it.
    Replace(PathBuf),
    /// An existing file that is not a regular file (a device, a FIFO): write through it.
    Through(PathBuf),
}

fn invalid(path: &Path, why: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{}: {why}", path.display()),
    )
}

fn target(path: &Path) -> io::Result<Target> {
    let text = path.as_os_str().to_string_lossy();
    if path.file_name().is_none()
        || text.ends_with('/')
        || text.ends_with(std::path::MAIN_SEPARATOR)
    {
        return Err(invalid(path, "names a directory, not a file"));
    }
    let resolved = match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => fs::canonicalize(path).map_err(|e| {
            invalid(
                path,
                &format!("is a symbolic link whose target cannot be resolved ({e})"),
            )
        })?,
        _ => path.to_path_buf(),
    };
    match fs::metadata(&resolved) {
        Ok(m) if m.is_dir() => Err(invalid(path, "is a directory")),
        Ok(m) if m.is_file() => Ok(Target::Replace(resolved)),
        Ok(_) => Ok(Target::Through(resolved)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Target::Replace(resolved)),
        Err(e) => Err(e),
    }
}

/// A unique temporary name beside `path`: `.NAME.PID.N.tmp`, with `suffix` appended (a
/// chart keeps `.png` last, which the PNG encoder reads the format from).
fn temp_beside(path: &Path, suffix: &str) -> PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.{}.{n}.tmp{suffix}", std::process::id()))
}

/// Whether a file can be written at `path` before any work is done: a path that ends in
/// `/`, a directory and a dangling symbolic link are refused; so is a missing or read-only
/// directory. A device or FIFO is accepted (it is written through).
pub fn check_writable(path: &Path) -> Result<(), String> {
    let dest = match target(path).map_err(|e| format!("cannot write {e}"))? {
        Target::Through(_) => return Ok(()),
        Target::Replace(p) => p,
    };
    let dir = dest
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !dir.is_dir() {
        return Err(format!(
            "cannot write {}: directory {} does not exist",
            path.display(),
            dir.display()
        ));
    }
    let probe = temp_beside(&dest, ".probe");
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .map_err(|e| format!("cannot write to {}: {e}", dir.display()))?;
    let _ = fs::remove_file(probe);
    Ok(())
}

/// A temporary file that becomes `path` on [`AtomicFile::commit`] and is removed if dropped
/// uncommitted (an error, a panic, a recording abandoned).
#[derive(Debug)]
pub struct AtomicFile {
    tmp: PathBuf,
    target: Target,
    done: bool,
}

impl AtomicFile {
    /// Prepare a write to `path` (see the module docs for what happens to what is there).
    /// `suffix` ends the temporary name (`""`, or `".png"` for a chart).
    pub fn new(path: &Path, suffix: &str) -> io::Result<AtomicFile> {
        let target = target(path)?;
        let tmp = match &target {
            Target::Replace(p) => temp_beside(p, suffix),
            // Through a device: draw into the system's temporary directory, then copy.
            Target::Through(p) => temp_beside(
                &std::env::temp_dir().join(p.file_name().unwrap_or_default()),
                suffix,
            ),
        };
        Ok(AtomicFile {
            tmp,
            target,
            done: false,
        })
    }

    /// The temporary file to write.
    pub fn path(&self) -> &Path {
        &self.tmp
    }

    /// Create the temporary file and open it for writing.
    pub fn create(&self) -> io::Result<File> {
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&self.tmp)
    }

    /// Move the finished temporary file into place.
    pub fn commit(mut self) -> io::Result<()> {
        self.done = true;
        let result = match &self.target {
            Target::Replace(p) => {
                File::open(&self.tmp).and_then(|f| f.sync_all())?;
                fs::rename(&self.tmp, p)
            }
            Target::Through(p) => {
                let bytes = fs::read(&self.tmp);
                let _ = fs::remove_file(&self.tmp);
                write_through(p, &bytes?)
            }
        };
        if result.is_err() {
            let _ = fs::remove_file(&self.tmp);
        }
        result
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if !self.done {
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

fn write_through(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = OpenOptions::new().write(true).open(path)?;
    f.write_all(bytes)?;
    f.flush()
}

/// Write `bytes` to `path` atomically (see the module docs).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let file = AtomicFile::new(path, "")?;
    if let Target::Through(p) = &file.target {
        return write_through(p, bytes);
    }
    {
        let mut f = file.create()?;
        f.write_all(bytes)?;
    }
    file.commit()
}

/// Draw a chart under a temporary name (ending in `.png`, which the backend reads the format
/// from) and move it into place like [`write_atomic`], so an interrupted run never leaves a
/// half-drawn figure behind.
pub fn atomic_png(path: &Path, draw: impl FnOnce(&Path) -> PlotResult) -> PlotResult {
    let file = AtomicFile::new(path, ".png")?;
    draw(file.path())?;
    file.commit()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("ic-output-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    fn leftovers(d: &Path) -> Vec<String> {
        fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".tmp"))
            .collect()
    }

    #[test]
    fn a_regular_file_is_replaced_and_no_temporary_is_left() {
        let d = dir("regular");
        let p = d.join("r.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        assert!(leftovers(&d).is_empty(), "{:?}", leftovers(&d));
        let _ = fs::remove_dir_all(d);
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_stays_a_link_and_its_target_is_written() {
        let d = dir("link");
        let real = d.join("real.json");
        fs::write(&real, b"old").unwrap();
        let link = d.join("link.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_atomic(&link, b"new").unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read(&real).unwrap(), b"new");
        let dangling = d.join("dangling.json");
        std::os::unix::fs::symlink(d.join("missing/x"), &dangling).unwrap();
        assert!(write_atomic(&dangling, b"x").is_err());
        assert!(check_writable(&dangling).is_err());
        assert!(leftovers(&d).is_empty(), "{:?}", leftovers(&d));
        let _ = fs::remove_dir_all(d);
    }

    #[cfg(unix)]
    #[test]
    fn dev_null_is_written_through() {
        use std::os::unix::fs::FileTypeExt;
        let null = Path::new("/dev/null");
        if !fs::metadata(null).is_ok_and(|m| m.file_type().is_char_device()) {
            return;
        }
        assert_eq!(target(null).unwrap(), Target::Through(null.into()));
        check_writable(null).unwrap();
        write_atomic(null, b"x").unwrap();
        assert!(fs::metadata(null).unwrap().file_type().is_char_device());
    }

    #[test]
    fn directories_are_refused_and_a_failed_chart_leaves_nothing() {
        let d = dir("dirs");
        assert!(check_writable(&d).is_err());
        assert!(check_writable(Path::new("nodir/")).is_err());
        assert!(write_atomic(&d, b"x").is_err());
        assert!(check_writable(&d.join("missing/x.json")).is_err());
        let r = atomic_png(&d.join("c.png"), |p| {
            fs::write(p, b"half")?;
            Err("drawing failed".into())
        });
        assert!(r.is_err());
        assert!(fs::read_dir(&d).unwrap().next().is_none());
        let _ = fs::remove_dir_all(d);
    }
}
