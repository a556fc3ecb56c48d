//! Device defaults (`Device device="cuda:1"`): the string is checked and
//! normalised the way `c10::Device(const std::string&)` does, with its
//! error texts, and kept in its printed form.

use c10_core::Error;

use super::number::stoi_digits;

/// Device type names `c10::Device` accepts, in PyTorch's order (also the
/// order of its error message).
const DEVICE_TYPES: [&str; 20] = [
    "cpu",
    "cuda",
    "ipu",
    "xpu",
    "mkldnn",
    "opengl",
    "opencl",
    "ideep",
    "hip",
    "ve",
    "fpga",
    "maia",
    "xla",
    "lazy",
    "vulkan",
    "mps",
    "meta",
    "hpu",
    "mtia",
    "privateuseone",
];

/// Parses a device string and returns it as `c10::Device` prints
/// (`cpu`, `cuda:1`). The index is a `DeviceIndex` (`int8_t`), so large
/// indices wrap as they do in PyTorch's release builds.
pub(crate) fn parse_device(text: &str) -> Result<String, Error> {
    if text.is_empty() {
        return Err(Error::runtime("Device string must not be empty"));
    }
    let invalid = || Error::runtime(format!("Invalid device string: '{text}'"));
    let (name, index) = match text.split_once(':') {
        Some((name, index)) => (name, Some(index)),
        None => (text, None),
    };
    let name_ok = !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphabetic() || b == b'_');
    if !name_ok {
        return Err(invalid());
    }
    let index = match index {
        None => None,
        Some(digits) => {
            let ok = !digits.is_empty()
                && digits.bytes().all(|b| b.is_ascii_digit())
                && (digits.len() == 1 || !digits.starts_with('0'));
            if !ok {
                return Err(invalid());
            }
            let value = stoi_digits(digits).ok_or_else(|| {
                Error::runtime(format!(
                    "Could not parse device index '{digits}' in device string '{text}'"
                ))
            })?;
            // static_cast<c10::DeviceIndex>: keep the low byte, signed.
            Some(value as i8)
        }
    };
    if !DEVICE_TYPES.contains(&name) {
        return Err(Error::runtime(format!(
            "Expected one of {} device type at start of device string: {name}",
            DEVICE_TYPES.join(", ")
        )));
    }
    Ok(match index {
        Some(i) if i != -1 => format!("{name}:{i}"),
        _ => name.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_strings() {
        assert_eq!(parse_device("cpu").unwrap(), "cpu");
        assert_eq!(parse_device("cuda:1").unwrap(), "cuda:1");
        assert_eq!(parse_device("cuda:255").unwrap(), "cuda");
        assert_eq!(parse_device("cuda:200").unwrap(), "cuda:-56");
        assert_eq!(
            parse_device("cuda:01").unwrap_err().message(),
            "Invalid device string: 'cuda:01'"
        );
        assert!(parse_device("gpu")
            .unwrap_err()
            .message()
            .ends_with("device type at start of device string: gpu"));
        assert!(parse_device("").is_err());
        assert!(parse_device("cuda:").is_err());
        assert!(parse_device("cuda:1:2").is_err());
    }
}
