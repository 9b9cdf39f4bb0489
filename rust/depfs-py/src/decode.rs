//! Python bindings of the decoders (`depfs.decode`): numpy in, numpy out. Scores are copied into
//! row-major f64 (float32, integer, float16 and F-ordered arrays are converted; single calls read a C-ordered
//! float64 array in place); batch forms copy their inputs into an owned buffer and release
//! the GIL, optionally over several threads (the core's map_chunks). Copies are reserved with
//! `try_reserve` (a huge n is a ValueError naming it, not an abort), and the O(n³) single
//! calls poll for Ctrl-C (see `Signals`).

use std::cell::RefCell;
use std::thread::LocalKey;

use depfs_core::decode::{self, CleWorkspace, Eisner2Workspace, EisnerWorkspace, KBestWorkspace};
use depfs_core::util::map_chunks;
use numpy::{
    IntoPyArray, PyArray1, PyArrayDescrMethods, PyArrayDyn, PyArrayMethods, PyUntypedArray,
    PyUntypedArrayMethods,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyList;

use crate::errors::IntoPyResult;

thread_local! {
    static CLE_WS: RefCell<CleWorkspace> = RefCell::new(CleWorkspace::new());
    static EISNER_WS: RefCell<EisnerWorkspace> = RefCell::new(EisnerWorkspace::new());
}

/// A score array copied to row-major f64, with its side length n1.
struct Scores {
    values: Vec<f64>,
    n1: usize,
}

/// Copies a float32/float64 numpy array (C- or F-ordered) of `ndim` equal sides into row-major
/// f64. Wrong type, dtype, ndim or shape is a `ValueError` naming `what`.
fn read_array(what: &str, obj: &Bound<'_, PyAny>, ndim: usize) -> PyResult<Scores> {
    let mut values = Vec::new();
    let n1 = append_array(|| what.to_string(), obj, ndim, &mut values)?;
    Ok(Scores { values, n1 })
}

/// Appends the array's values in row-major order to `out` and returns its side n1 (see
/// [`read_array`]); `what` names the array, and is called only when there is an error
/// (batch calls would otherwise format a name per matrix).
fn append_array(
    what: impl Fn() -> String,
    obj: &Bound<'_, PyAny>,
    ndim: usize,
    out: &mut Vec<f64>,
) -> PyResult<usize> {
    let Ok(arr) = obj.cast::<PyUntypedArray>() else {
        let ty = obj.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into());
        return Err(PyValueError::new_err(format!(
            "{} must be a numpy.ndarray of float32 or float64, got {ty}",
            what()
        )));
    };
    let shape = arr.shape();
    if shape.len() != ndim {
        return Err(PyValueError::new_err(format!(
            "{} must have {ndim} dimensions (n+1{}), got shape {shape:?}",
            what(),
            ", n+1".repeat(ndim - 1)
        )));
    }
    let n1 = shape[0];
    if n1 == 0 || shape.iter().any(|&d| d != n1) {
        return Err(PyValueError::new_err(format!(
            "{} must have shape ({}) with n+1 >= 1 (index 0 = ROOT), got {shape:?}",
            what(),
            vec!["n+1"; ndim].join(", ")
        )));
    }
    // An error naming n, not a process abort, when the copy cannot be had.
    let cells = n1.checked_pow(ndim as u32).unwrap_or(usize::MAX);
    if out.try_reserve(cells).is_err() {
        return Err(PyValueError::new_err(format!(
            "{}: a sentence of n = {} words: its {:.1} GB of scores cannot be allocated",
            what(),
            n1 - 1,
            cells as f64 * 8.0 / 1e9
        )));
    }
    if let Ok(a) = obj.cast::<PyArrayDyn<f64>>() {
        let ro = a.try_readonly()?;
        // `as_slice` also accepts F-ordered memory, which is the transpose: C order only.
        match ro.as_slice() {
            Ok(s) if arr.is_c_contiguous() => out.extend_from_slice(s),
            _ => out.extend(ro.as_array().iter().copied()),
        }
    } else if let Ok(a) = obj.cast::<PyArrayDyn<f32>>() {
        let ro = a.try_readonly()?;
        out.extend(ro.as_array().iter().map(|&v| f64::from(v)));
    } else if matches!(arr.dtype().kind(), b'i' | b'u')
        || (arr.dtype().kind() == b'f' && arr.dtype().itemsize() <= 8)
    {
        // Integers, float16 and floats of the other byte order (`>f8`) as float64 (what
        // numpy.asarray(x, float64) does to a list of ints): off the native float32/float64
        // path, so that path tests nothing more. (Long doubles are refused: see decode.py.)
        let converted = obj.call_method1("astype", ("float64",))?;
        return append_array(what, &converted, ndim, out);
    } else {
        return Err(PyValueError::new_err(format!(
            "{} must have dtype float32 or float64, got {}",
            what(),
            arr.dtype()
        )));
    }
    Ok(n1)
}

/// Calls `f(values, n1)` on a score array without copying it when it is already C-ordered
/// float64; otherwise on a converted copy (see [`read_array`]).
fn with_array<R>(
    what: &str,
    obj: &Bound<'_, PyAny>,
    ndim: usize,
    f: impl FnOnce(&[f64], usize) -> R,
) -> PyResult<R> {
    if let Ok(a) = obj.cast::<PyArrayDyn<f64>>() {
        let ro = a.try_readonly()?;
        let shape = ro.shape();
        let square = shape.len() == ndim && shape[0] > 0 && shape.iter().all(|&d| d == shape[0]);
        if square && a.is_c_contiguous() {
            if let Ok(values) = ro.as_slice() {
                return Ok(f(values, shape[0]));
            }
        }
    }
    let s = read_array(what, obj, ndim)?;
    Ok(f(&s.values, s.n1))
}

/// The `poll` hook of a single decode: checks for a pending signal (Ctrl-C), taking the GIL
/// for the check when the call released it, and keeps the exception so that the call raises
/// it instead of the decoder's "stopped". Called every few million chart cells.
#[derive(Default)]
struct Signals(Option<PyErr>);

impl Signals {
    fn poll(&mut self) -> bool {
        match Python::attach(|py| py.check_signals()) {
            Ok(()) => false,
            Err(e) => {
                self.0 = Some(e);
                true
            }
        }
    }

    fn result<T>(self, py: Python<'_>, r: depfs_core::Result<T>) -> PyResult<T> {
        match self.0 {
            Some(e) => Err(e),
            None => r.py_err(py),
        }
    }
}

fn heads_array(py: Python<'_>, heads: Vec<i32>) -> Bound<'_, PyArray1<i64>> {
    heads.into_iter().map(i64::from).collect::<Vec<_>>().into_pyarray(py)
}

/// Maximum spanning tree (Chu-Liu-Edmonds / Tarjan, O(n²)) of `scores[dep, head]`, shape
/// (n+1, n+1), index 0 = ROOT, `-inf` = pruned arc. Returns heads (int64, heads[0] = -1).
/// It does not poll for Ctrl-C: its O(n²) time grows only as fast as the memory it needs.
#[pyfunction]
#[pyo3(signature = (scores, single_root = true))]
fn decode_cle<'py>(
    py: Python<'py>,
    scores: &Bound<'py, PyAny>,
    single_root: bool,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    let heads = with_array("scores", scores, 2, |values, n1| {
        CLE_WS.with_borrow_mut(|ws| ws.decode(values, n1, single_root))
    })?
    .py_err(py)?;
    Ok(heads_array(py, heads))
}

/// Best projective tree (Eisner, O(n³)) of `scores[dep, head]`; see `decode_cle`.
#[pyfunction]
#[pyo3(signature = (scores, single_root = true))]
fn decode_eisner<'py>(
    py: Python<'py>,
    scores: &Bound<'py, PyAny>,
    single_root: bool,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    let mut signals = Signals::default();
    let heads = with_array("scores", scores, 2, |values, n1| {
        EISNER_WS.with_borrow_mut(|ws| ws.decode_polled(values, n1, single_root, &mut || signals.poll()))
    })?;
    let heads = signals.result(py, heads)?;
    Ok(heads_array(py, heads))
}

/// Best projective tree under arc scores `arc[dep, head]` plus adjacent-sibling scores
/// `sib[dep, head, sibling]` (sibling == head for the innermost child), O(n³).
#[pyfunction]
#[pyo3(signature = (arc, sib, single_root = true))]
fn decode_eisner2<'py>(
    py: Python<'py>,
    arc: &Bound<'py, PyAny>,
    sib: &Bound<'py, PyAny>,
    single_root: bool,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    let a = read_array("arc", arc, 2)?;
    let s = read_array("sib", sib, 3)?;
    if s.n1 != a.n1 {
        return Err(PyValueError::new_err(format!(
            "sib must have shape ({0}, {0}, {0}) to match arc, got side {1}",
            a.n1, s.n1
        )));
    }
    let mut signals = Signals::default();
    let heads = py.detach(|| {
        Eisner2Workspace::new().decode_polled(&a.values, &s.values, a.n1, single_root, &mut || signals.poll())
    });
    let heads = signals.result(py, heads)?;
    Ok(heads_array(py, heads))
}

/// The k best projective trees, best first: a list of (heads, score).
#[pyfunction]
#[pyo3(signature = (scores, k, single_root = true))]
fn decode_eisner_kbest<'py>(
    py: Python<'py>,
    scores: &Bound<'py, PyAny>,
    k: usize,
    single_root: bool,
) -> PyResult<Vec<(Bound<'py, PyArray1<i64>>, f64)>> {
    let s = read_array("scores", scores, 2)?;
    let mut signals = Signals::default();
    let list = py.detach(|| {
        KBestWorkspace::new().decode_polled(&s.values, s.n1, k, single_root, &mut || signals.poll())
    });
    let list = signals.result(py, list)?;
    Ok(list.into_iter().map(|(h, score)| (heads_array(py, h), score)).collect())
}

/// Sum of `scores[d, heads[d]]` over the words d >= 1.
#[pyfunction]
fn decode_tree_score(scores: &Bound<'_, PyAny>, heads: Vec<i64>) -> PyResult<f64> {
    let s = read_array("scores", scores, 2)?;
    if heads.len() != s.n1 {
        return Err(PyValueError::new_err(format!(
            "heads has {} entries, scores has side {}",
            heads.len(),
            s.n1
        )));
    }
    // heads[0] is ROOT's (-1 by convention, not scored); every word's head must be a position.
    if let Some((d, h)) = heads.iter().enumerate().skip(1).find(|(_, &h)| h < 0 || h as usize >= s.n1) {
        return Err(PyValueError::new_err(format!("heads[{d}] = {h} is not a position in 0..{}", s.n1 - 1)));
    }
    let heads: Vec<i32> = heads.iter().map(|&h| i32::try_from(h).unwrap_or(-1)).collect();
    Ok(decode::tree_score(&s.values, &heads))
}

/// Values (f64) of the matrices one thread decodes per GIL release: 256 KiB, so that the group
/// and a workspace stay in cache (a copy of the whole batch would go out to memory and back).
const GROUP_VALUES: usize = 1 << 15;

/// Runs `decode(workspace, values, n1, poll)` over the matrices without the GIL on `threads`
/// threads (1: the calling thread; 0: all cores; more than the cores: capped), through the
/// core's `map_chunks`. The matrices are copied into one reused buffer first (owned, so no
/// Python thread can change them during the decode), with no allocation or text per matrix:
/// on one thread group by group, with the workspace `local` that single calls use; on
/// several, the whole batch at once. The first bad matrix (in list order) is the error. On one
/// thread, `poll` checks for Ctrl-C (a huge matrix in a batch stops as a single call does); the
/// pool's threads cannot take signals and get a poll that never stops.
fn run_batch<W: Default + Send>(
    py: Python<'_>,
    name: &str,
    matrices: &Bound<'_, PyList>,
    threads: usize,
    local: &'static LocalKey<RefCell<W>>,
    decode: impl Fn(&mut W, &[f64], usize, &mut dyn FnMut() -> bool) -> depfs_core::Result<Vec<i32>> + Sync,
) -> PyResult<Vec<Vec<i32>>> {
    let n = matrices.len();
    let mut out = Vec::with_capacity(n);
    let mut values = Vec::new();
    // Matrix `first + j` of the group is values[starts[j]..starts[j + 1]], of side n1s[j].
    let (mut starts, mut n1s) = (vec![0], Vec::new());
    let mut next = 0;
    while next < n {
        py.check_signals()?; // Ctrl-C between groups (a group is a few ms of work)
        let first = next;
        values.clear();
        starts.truncate(1);
        n1s.clear();
        while next < n && (threads != 1 || values.len() < GROUP_VALUES) {
            let m = matrices.get_item(next)?;
            n1s.push(append_array(|| format!("{name}: matrices[{next}]"), &m, 2, &mut values)?);
            starts.push(values.len());
            next += 1;
        }
        let one = |ws: &mut W, j: usize, poll: &mut dyn FnMut() -> bool| {
            decode(ws, &values[starts[j]..starts[j + 1]], n1s[j], poll).map_err(|e| match e {
                depfs_core::Error::NoSpanningTree(m) => {
                    depfs_core::Error::NoSpanningTree(format!("matrices[{}]: {m}", first + j))
                }
                depfs_core::Error::InvalidArgument(m) => {
                    depfs_core::Error::InvalidArgument(format!("matrices[{}]: {m}", first + j))
                }
                other => other,
            })
        };
        let mut signals = Signals::default();
        let group: depfs_core::Result<Vec<Vec<i32>>> = py.detach(|| {
            if threads == 1 {
                local.with_borrow_mut(|ws| {
                    (0..n1s.len()).map(|j| one(ws, j, &mut || signals.poll())).collect()
                })
            } else {
                // Chunks of 64 matrices: small enough to spread, large enough to amortise.
                map_chunks(threads, n1s.len(), 64, W::default, |ws, range| {
                    range.map(|j| one(ws, j, &mut || false)).collect::<Vec<_>>()
                })?
                .into_iter()
                .collect()
            }
        });
        out.extend(signals.result(py, group)?);
    }
    Ok(out)
}

/// `decode_cle` over a list of matrices with the GIL released; `threads` > 1 uses rayon
/// (0 = all cores).
#[pyfunction]
#[pyo3(signature = (matrices, single_root = true, threads = 1))]
fn decode_cle_batch<'py>(
    py: Python<'py>,
    matrices: &Bound<'py, PyList>,
    single_root: bool,
    threads: usize,
) -> PyResult<Vec<Bound<'py, PyArray1<i64>>>> {
    let heads = run_batch(
        py,
        "cle_batch",
        matrices,
        threads,
        &CLE_WS,
        |ws: &mut CleWorkspace, values, n1, _poll| {
            ws.decode(values, n1, single_root) // O(n²): no polling (see decode_cle)
        },
    )?;
    Ok(heads.into_iter().map(|h| heads_array(py, h)).collect())
}

/// `decode_eisner` over a list of matrices with the GIL released; see `decode_cle_batch`.
#[pyfunction]
#[pyo3(signature = (matrices, single_root = true, threads = 1))]
fn decode_eisner_batch<'py>(
    py: Python<'py>,
    matrices: &Bound<'py, PyList>,
    single_root: bool,
    threads: usize,
) -> PyResult<Vec<Bound<'py, PyArray1<i64>>>> {
    let heads = run_batch(
        py,
        "eisner_batch",
        matrices,
        threads,
        &EISNER_WS,
        |ws: &mut EisnerWorkspace, values, n1, poll| ws.decode_polled(values, n1, single_root, poll),
    )?;
    Ok(heads.into_iter().map(|h| heads_array(py, h)).collect())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(decode_cle, m)?)?;
    m.add_function(wrap_pyfunction!(decode_eisner, m)?)?;
    m.add_function(wrap_pyfunction!(decode_eisner2, m)?)?;
    m.add_function(wrap_pyfunction!(decode_eisner_kbest, m)?)?;
    m.add_function(wrap_pyfunction!(decode_tree_score, m)?)?;
    m.add_function(wrap_pyfunction!(decode_cle_batch, m)?)?;
    m.add_function(wrap_pyfunction!(decode_eisner_batch, m)?)?;
    Ok(())
}
