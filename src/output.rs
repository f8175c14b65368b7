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
//!   opened and written through, never renamed over or removed. A FIFO only while something
//!   reads it: [`check_writable`] opens it without blocking, refuses it if nothing has it
//!   open for reading (the write would otherwise block forever once the work is done) and
//!   holds it open until the write, so a waiting reader does not see the end of the file
//!   first; the write itself never waits for a reader to appear;
//! - a directory, a path that ends in `/`, or a block device: refused.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
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
        Ok(m) if is_block_device(&m) => Err(invalid(path, "is a block device")),
        Ok(m) if m.is_file() => Ok(Target::Replace(resolved)),
        Ok(_) => Ok(Target::Through(resolved)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Target::Replace(resolved)),
        Err(e) => Err(e),
    }
}

#[cfg(unix)]
fn is_block_device(m: &fs::Metadata) -> bool {
    std::os::unix::fs::FileTypeExt::is_block_device(&m.file_type())
}

#[cfg(not(unix))]
fn is_block_device(_: &fs::Metadata) -> bool {
    false
}

/// Whether `path` is a FIFO (named pipe).
fn is_fifo(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo())
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

/// Write ends of FIFOs that [`check_writable`] opened, held until [`write_through`] writes
/// them.
static HELD_FIFOS: Mutex<Vec<(PathBuf, File)>> = Mutex::new(Vec::new());

/// Open a FIFO for writing without waiting for a reader: an error saying so if nothing has
/// it open for reading.
fn open_fifo(path: &Path) -> io::Result<File> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
            .map_err(|e| {
                if e.raw_os_error() == Some(libc::ENXIO) {
                    invalid(
                        path,
                        "is a FIFO that nothing reads (start its reader first; writing to it \
                         would wait forever)",
                    )
                } else {
                    e
                }
            })
    }
    #[cfg(not(unix))]
    {
        OpenOptions::new().write(true).open(path)
    }
}

/// Write all of `bytes` to a file opened without blocking, waiting while a pipe is full.
fn write_waiting(mut f: File, mut bytes: &[u8]) -> io::Result<()> {
    while !bytes.is_empty() {
        match f.write(bytes) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
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
/// `/`, a directory, a block device and a dangling symbolic link are refused; so is a missing
/// or read-only directory. A character device is accepted (it is written through), a FIFO
/// only if something has it open for reading (it is then held open until the write; see the
/// module docs).
pub fn check_writable(path: &Path) -> Result<(), String> {
    let dest = match target(path).map_err(|e| format!("cannot write {e}"))? {
        Target::Through(p) if is_fifo(&p) => {
            let f = open_fifo(&p).map_err(|e| format!("cannot write {e}"))?;
            HELD_FIFOS
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((p, f));
            return Ok(());
        }
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
    if is_fifo(path) {
        // The end `check_writable` holds, else a new one; either way never waiting for a
        // reader. Other ends held for the same path close once this one is written.
        let mut held: Vec<File> = {
            let mut all = HELD_FIFOS.lock().unwrap_or_else(|e| e.into_inner());
            let (mine, rest) = std::mem::take(&mut *all)
                .into_iter()
                .partition(|(p, _)| p == path);
            *all = rest;
            mine.into_iter().map(|(_, f)| f).collect()
        };
        let f = match held.pop() {
            Some(f) => f,
            None => open_fifo(path)?,
        };
        return write_waiting(f, bytes);
    }
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

    /// A FIFO that nothing reads is refused at once — checking it and writing it never wait
    /// for a reader — and one that something reads gets the whole contents, more than a pipe
    /// holds at a time, and stays a FIFO.
    #[cfg(unix)]
    #[test]
    fn a_fifo_is_written_only_while_something_reads_it() {
        use std::io::Read;
        use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
        let d = dir("fifo");
        let fifo = d.join("pipe.json");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            return;
        }
        let err = check_writable(&fifo).unwrap_err();
        assert!(err.contains("nothing reads"), "{err}");
        assert!(write_atomic(&fifo, b"x").is_err());
        // A reader that does not wait for a writer, then the check that holds the write end.
        let mut reader = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&fifo)
            .unwrap();
        check_writable(&fifo).unwrap();
        let bytes: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        let writer = {
            let (fifo, bytes) = (fifo.clone(), bytes.clone());
            std::thread::spawn(move || write_atomic(&fifo, &bytes))
        };
        let mut got = Vec::new();
        let mut buf = vec![0u8; 1 << 16];
        loop {
            match reader.read(&mut buf) {
                // No write end open any more: everything was written.
                Ok(0) => break,
                Ok(n) => got.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                Err(e) => panic!("{e}"),
            }
        }
        writer.join().unwrap().unwrap();
        assert!(got == bytes, "{} of {} bytes", got.len(), bytes.len());
        assert!(fs::metadata(&fifo).unwrap().file_type().is_fifo());
        assert!(leftovers(&d).is_empty(), "{:?}", leftovers(&d));
        let _ = fs::remove_dir_all(d);
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
