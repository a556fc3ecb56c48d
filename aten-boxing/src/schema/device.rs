//! Device defaults (`Device device="cuda:1"`): the string is checked and
//! normalised by c10-core's one device-string parser
//! ([`DeviceString`], `c10::Device(const std::string&)` with its error texts)
//! and kept in its printed form.

use c10_core::device::DeviceString;
use c10_core::Error;

/// Parses a device string and returns it as `c10::Device` prints (`cpu`,
/// `cuda:1`). Every device type name PyTorch knows is accepted; an index
/// that does not fit a `DeviceIndex` (`int8_t`) is an error.
pub(crate) fn parse_device(text: &str) -> Result<String, Error> {
    DeviceString::parse(text).map(|d| d.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::FunctionSchema;

    #[test]
    fn device_strings() {
        assert_eq!(parse_device("cpu").unwrap(), "cpu");
        assert_eq!(parse_device("cpu:0").unwrap(), "cpu:0");
        assert_eq!(parse_device("meta").unwrap(), "meta");
        assert_eq!(parse_device("cuda:1").unwrap(), "cuda:1");
        assert_eq!(parse_device("ipu:3").unwrap(), "ipu:3");
        assert_eq!(
            parse_device("cuda:01").unwrap_err().message(),
            "Invalid device string: 'cuda:01'"
        );
        assert_eq!(
            parse_device("cuda:-1").unwrap_err().message(),
            "Invalid device string: 'cuda:-1'"
        );
        assert!(parse_device("gpu")
            .unwrap_err()
            .message()
            .ends_with("device type at start of device string: gpu"));
        assert!(parse_device("").is_err());
        assert!(parse_device("cuda:").is_err());
        assert!(parse_device("cuda:1:2").is_err());
    }

    #[test]
    fn out_of_range_indices_are_errors_not_wrapped() {
        // This parser used to keep the low byte: `cuda:200` became
        // `cuda:-56` and `cuda:255` became `cuda`.
        for text in ["cuda:200", "cuda:255", "cuda:256"] {
            let message = parse_device(text).unwrap_err().message().to_string();
            assert!(
                message.starts_with(&format!(
                    "Could not parse device index '{}' in device string '{text}'",
                    &text[5..]
                )),
                "{message}"
            );
        }
        let schema = FunctionSchema::parse("f(Device d=\"cuda:200\") -> ()");
        assert!(schema.is_err());
        let schema = FunctionSchema::parse("f(Device d=\"cuda:7\") -> ()").unwrap();
        assert_eq!(schema.to_string(), "f(Device d=cuda:7) -> ()");
    }
}
