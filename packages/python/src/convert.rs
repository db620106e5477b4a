//! Python values to JSON values and back: the crossing between Python and
//! the crate's boundary, whose own rules (depth, sizes, integers and floats
//! apart) then apply.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

/// Nesting the conversion from Python follows before it refuses: past
/// every `max_value_depth` the crate accepts (100), so the crate's own
/// limit is the one a script meets; the bound only keeps a cyclic or
/// absurdly deep Python value from exhausting the stack.
const MAX_DEPTH: usize = 128;

/// A JSON value as a Python value: `None`, `bool`, `int`, `float`, `str`,
/// `list` or `dict`. A float stays a float (`1.0`), an integer an `int`.
pub(crate) fn to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any()
            }
        }
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_py(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(members) => {
            let dict = PyDict::new(py);
            for (key, item) in members {
                dict.set_item(key, to_py(py, item)?)?;
            }
            dict.into_any()
        }
    })
}

/// A Python value as JSON, or a sentence saying what cannot cross: `None`,
/// `bool`, `int` (64 bits), finite `float`, `str`, `list`/`tuple`, and
/// `dict` with `str` keys.
pub(crate) fn from_py(value: &Bound<'_, PyAny>) -> Result<Value, String> {
    convert(value, 0)
}

fn convert(value: &Bound<'_, PyAny>, depth: usize) -> Result<Value, String> {
    if value.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = value.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if value.is_instance_of::<PyInt>() {
        if let Ok(i) = value.extract::<i64>() {
            return Ok(Value::from(i));
        }
        if let Ok(u) = value.extract::<u64>() {
            return Ok(Value::from(u));
        }
        return Err(format!(
            "the integer {} does not fit in 64 bits",
            short(value)
        ));
    }
    if let Ok(f) = value.cast::<PyFloat>() {
        let f = f.value();
        return Number::from_f64(f)
            .map(Value::Number)
            .ok_or_else(|| format!("the float {f} has no JSON form"));
    }
    if let Ok(s) = value.cast::<PyString>() {
        return s
            .to_str()
            .map(|s| Value::String(s.to_owned()))
            .map_err(|_| "the text is not valid Unicode (it holds lone surrogates)".to_owned());
    }
    if depth >= MAX_DEPTH {
        return Err(format!(
            "the value nests deeper than {MAX_DEPTH} levels (or holds itself)"
        ));
    }
    if let Ok(list) = value.cast::<PyList>() {
        return list.iter().map(|v| convert(&v, depth + 1)).collect();
    }
    if let Ok(tuple) = value.cast::<PyTuple>() {
        return tuple.iter().map(|v| convert(&v, depth + 1)).collect();
    }
    if let Ok(dict) = value.cast::<PyDict>() {
        let mut members = Map::new();
        for (key, item) in dict.iter() {
            let Ok(key) = key.cast::<PyString>() else {
                return Err(format!("a dict key must be a str, not {}", type_name(&key)));
            };
            let key = key.to_str().map_err(|_| {
                "a dict key is not valid Unicode (it holds lone surrogates)".to_owned()
            })?;
            members.insert(key.to_owned(), convert(&item, depth + 1)?);
        }
        return Ok(Value::Object(members));
    }
    Err(format!(
        "a {} cannot cross into Lua (None, bool, int, float, str, list, tuple and dict can)",
        type_name(value)
    ))
}

fn type_name(value: &Bound<'_, PyAny>) -> String {
    value
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "value".to_owned())
}

/// The value's repr, cut to 40 characters for a message.
fn short(value: &Bound<'_, PyAny>) -> String {
    let text = value
        .repr()
        .map(|r| r.to_string())
        .unwrap_or_else(|_| "?".to_owned());
    match text.char_indices().nth(40) {
        Some((at, _)) => format!("{}...", &text[..at]),
        None => text,
    }
}
