//! The files of the real bug-report cases under `testdata/cases/`, for the unit tests that read
//! every case line (the crate does no I/O outside its tests).

use std::path::{Path, PathBuf};

/// Every file of every case folder with its text, in path order; a file that is not UTF-8 text
/// is left out. Panics when the cases folder cannot be read.
pub(crate) fn case_files() -> Vec<(PathBuf, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/cases");
    let mut files: Vec<_> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .flatten()
        .filter_map(|case| std::fs::read_dir(case.path()).ok())
        .flat_map(|dir| dir.flatten().map(|f| f.path()))
        .filter_map(|path| Some((std::fs::read_to_string(&path).ok()?, path)))
        .map(|(text, path)| (path, text))
        .collect();
    files.sort();
    files
}
