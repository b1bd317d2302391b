//! Writing a file the user names (`report -o`, `skew --plot`) without
//! destroying what the name already is.
//!
//! A regular file (or a name that does not exist yet) is replaced
//! atomically: the bytes go to a fresh file in the same directory, which is
//! renamed over the name only once it is whole, so a failed write never
//! leaves a half page that looks like a report. Anything else the name may
//! be is written through instead, because a rename would swap the thing
//! itself for a plain file: a character device (`/dev/null`; as root,
//! renaming over it replaces the device node for everyone), a FIFO (its
//! reader would get nothing), a terminal, or a symbolic link (the link stays
//! a link and its target gets the bytes). A block device (a disk) and a
//! socket are refused. `/dev/stdout` and the other `/proc/self/fd`
//! names are our own descriptors, so they are written through as well.
//!
//! A named file is never one of the command's inputs: [`Output`] holds the
//! files the command reads and refuses (exit 2, naming both) an output that
//! is the same file as any of them, when the command starts and again just
//! before writing, since replacing it would destroy the input the command
//! was given (`report T.toml -o T.toml`, one tab-completion slip).

use crate::exit::{CliError, Result};
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// A file the user names for a command to write, with the files the
/// command reads: the only way a command writes a named file.
pub struct Output {
    /// The flag that names it (for messages).
    flag: &'static str,
    path: PathBuf,
    /// Each input: what it is (its flag, or "the topology file") and its path.
    inputs: Vec<(String, PathBuf)>,
}

impl Output {
    /// The file `path`, named by `flag`.
    pub fn new(flag: &'static str, path: &Path) -> Output {
        Output {
            flag,
            path: path.to_path_buf(),
            inputs: Vec::new(),
        }
    }

    /// Records `path` (`-` is stdin) as an input, named `what` in messages,
    /// and refuses now when the output is that same file.
    pub fn input(&mut self, what: impl Into<String>, path: &Path) -> Result<()> {
        let input = (what.into(), path.to_path_buf());
        self.refuse(&input)?;
        self.inputs.push(input);
        Ok(())
    }

    /// [`Output::input`] for each of `paths`.
    pub fn inputs<'a>(
        &mut self,
        what: &str,
        paths: impl IntoIterator<Item = &'a Path>,
    ) -> Result<()> {
        for p in paths {
            self.input(what, p)?;
        }
        Ok(())
    }

    /// Writes `bytes` to the file, after checking the inputs once more (a
    /// file may have been linked in meanwhile); an error names the flag and
    /// the path (exit 2).
    pub fn write(&self, bytes: &[u8]) -> Result<()> {
        for input in &self.inputs {
            self.refuse(input)?;
        }
        write(self.flag, &self.path, bytes)
    }

    /// An error when the output is the input `(what, path)`.
    fn refuse(&self, (what, path): &(String, PathBuf)) -> Result<()> {
        if same_file(&self.path, path) {
            let given = if path.as_os_str() == "-" {
                "- (stdin)".to_string()
            } else {
                path.display().to_string()
            };
            return Err(CliError::msg(format!(
                "{} {}: the same file as {what} {given}: writing it would replace the input; give another file",
                self.flag,
                self.path.display(),
            )));
        }
        Ok(())
    }
}

/// Whether writing `output` would write over the regular file `input` (`-`:
/// whatever stdin reads): the same device and inode once links are
/// followed (a symbolic or hard link, `/dev/stdout` redirected to it), or,
/// when either cannot be looked at, the same path once links are resolved.
/// A terminal, FIFO or device that is both is not a file to destroy: a
/// write goes through it, as to any other.
fn same_file(output: &Path, input: &Path) -> bool {
    let read = if input.as_os_str() == "-" {
        stdin_metadata()
    } else {
        fs::metadata(input)
    };
    match (fs::metadata(output), read) {
        (Ok(o), Ok(i)) => o.dev() == i.dev() && o.ino() == i.ino() && i.is_file(),
        // Nothing there yet: nothing to write over.
        (Err(e), _) if e.kind() == io::ErrorKind::NotFound => false,
        _ => match (fs::canonicalize(output), fs::canonicalize(input)) {
            (Ok(o), Ok(i)) => o == i,
            _ => false,
        },
    }
}

/// What stdin reads, looked at through its descriptor.
fn stdin_metadata() -> io::Result<fs::Metadata> {
    use std::os::fd::AsFd;
    let fd = std::io::stdin().as_fd().try_clone_to_owned()?;
    fs::File::from(fd).metadata()
}

/// Writes `bytes` to `path`; an error names `flag` and `path` (exit 2).
fn write(flag: &str, path: &Path, bytes: &[u8]) -> Result<()> {
    write_inner(path, bytes).map_err(|e| {
        if e.kind() == io::ErrorKind::BrokenPipe {
            // A FIFO whose reader left: the same as a closed stdout.
            return CliError::msg(format!(
                "{flag} {}: the reader went away before the file was written",
                path.display()
            ));
        }
        CliError::msg(format!("{flag} {}: {e}", path.display()))
    })
}

/// Where the bytes go once `path`'s symbolic links are followed.
enum Target {
    /// A regular file, or nothing yet: replaced atomically at this path
    /// (the link's target, when `path` is a link).
    Replace(PathBuf),
    /// Anything else: opened and written through.
    Through,
}

fn write_inner(path: &Path, bytes: &[u8]) -> io::Result<()> {
    match target(path)? {
        Target::Replace(real) => replace(&real, bytes),
        Target::Through => {
            // No O_CREAT: the name exists (it was just looked at), and no
            // O_TRUNC. A regular file gets here only as one of our own
            // descriptors (`-o /dev/stdout` with stdout redirected to a
            // file): appending keeps what the shell asked for, `>` (empty
            // already) and `>>` alike, where writing from offset 0 would
            // overwrite what a `>>` file held.
            let regular = fs::metadata(path).is_ok_and(|m| m.is_file());
            let mut f = OpenOptions::new().write(true).append(regular).open(path)?;
            f.write_all(bytes)?;
            f.flush()
        }
    }
}

/// Follows `path`'s symbolic links (lexically, hop by hop, as the kernel
/// does for the last component) to what the bytes should replace.
fn target(path: &Path) -> io::Result<Target> {
    let mut p = path.to_path_buf();
    // The kernel gives up after 40 links (ELOOP); so do we.
    for _ in 0..40 {
        // `/proc/self/fd/N` (and `/dev/fd/N`, the same directory) names an
        // open descriptor (a pipe, a terminal, the file a shell redirected
        // into): its link text is no path to rename over.
        if p.starts_with("/proc") || p.starts_with("/dev/fd") {
            return Ok(Target::Through);
        }
        let meta = match fs::symlink_metadata(&p) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Target::Replace(p)),
            Err(e) => return Err(e),
        };
        let t = meta.file_type();
        if t.is_symlink() {
            let to = fs::read_link(&p)?;
            p = match p.parent() {
                Some(dir) if to.is_relative() => dir.join(to),
                _ => to,
            };
            continue;
        }
        if t.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                "is a directory",
            ));
        }
        if t.is_block_device() {
            // A report written through to a disk overwrites its first
            // sectors: never what `-o` meant.
            return Err(io::Error::other(
                "is a block device; give a file, a character device or a FIFO",
            ));
        }
        if t.is_socket() {
            return Err(io::Error::other(
                "is a socket, which cannot be written as a file",
            ));
        }
        return Ok(if t.is_file() {
            Target::Replace(p)
        } else {
            Target::Through
        });
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

/// Writes a fresh file beside `real` and renames it over `real`. The fresh
/// file takes the permissions of the file it replaces, so a report a team
/// shares keeps its mode.
fn replace(real: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = match real.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let old = fs::metadata(real).ok();
    let mut tmp = None;
    for n in 0..100u32 {
        // Not derived from the file's name, which may already be as long
        // as a name can be.
        let candidate = dir.join(format!(".partwise-{}-{n}.tmp", std::process::id()));
        // create_new: never reuse (or follow a link planted at) a name
        // someone else made.
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o666)
            .open(&candidate)
        {
            Ok(f) => {
                tmp = Some((candidate, f));
                break;
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            // The file itself may be writable in a directory that is not:
            // say which one refused.
            Err(e) if old.is_some() => {
                return Err(io::Error::new(
                    e.kind(),
                    format!(
                        "cannot create a file in {} to replace it with whole: {e}",
                        dir.display()
                    ),
                ))
            }
            Err(e) => return Err(e),
        }
    }
    let Some((tmp, mut f)) = tmp else {
        return Err(io::Error::other(format!(
            "no free temporary name in {}",
            dir.display()
        )));
    };
    let written = (|| {
        f.write_all(bytes)?;
        if let Some(m) = &old {
            // Owner first: changing it may clear set-id bits the mode sets.
            // Only root may give a file away; anyone else keeps their own.
            let _ = std::os::unix::fs::fchown(&f, Some(m.uid()), Some(m.gid()));
            f.set_permissions(m.permissions())?;
        }
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, real)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}
