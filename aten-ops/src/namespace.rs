//! `OpNamespace` (`torch.ops.<ns>`, PyTorch's `_OpNamespace`): resolves
//! operator names lazily and caches what it resolved, so a name looked up
//! twice gives the same packet.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use c10_core::{Error, Result};

use crate::packet::OpOverloadPacket;
use crate::state::OpsInner;

/// One namespace of operators (`torch.ops.aten`, `torch.ops.myns`).
pub struct OpNamespace {
    name: String,
    root: Weak<OpsInner>,
    packets: Mutex<HashMap<String, Arc<OpOverloadPacket>>>,
}

impl OpNamespace {
    pub(crate) fn new(name: &str, root: Weak<OpsInner>) -> OpNamespace {
        OpNamespace {
            name: name.to_string(),
            root,
            packets: Mutex::new(HashMap::new()),
        }
    }

    /// The namespace's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `torch.ops.<ns>.<op_name>`: the packet of every overload of
    /// `ns::op_name`. Fails with PyTorch's `AttributeError` when the
    /// dispatcher has no def of that name.
    pub fn op(&self, op_name: &str) -> Result<Arc<OpOverloadPacket>> {
        let missing = || {
            Error::attribute_error(format!(
                "'_OpNamespace' '{}' object has no attribute '{op_name}'",
                self.name
            ))
        };
        let root = self.root.upgrade().ok_or_else(missing)?;
        let packet = {
            let mut packets = self.packets.lock().unwrap_or_else(|p| p.into_inner());
            match packets.get(op_name) {
                Some(packet) => Arc::clone(packet),
                None => {
                    let packet = OpOverloadPacket::new(
                        &self.name,
                        op_name,
                        Arc::downgrade(&root),
                        Arc::clone(&root.shared),
                    )
                    .into_arc();
                    if packet.overload_names().is_empty() {
                        return Err(missing());
                    }
                    packets.insert(op_name.to_string(), Arc::clone(&packet));
                    packet
                }
            }
        };
        if packet.overload_names().is_empty() {
            return Err(missing());
        }
        Ok(packet)
    }

    /// The operator names resolved so far (PyTorch's `_dir`), sorted, that
    /// still have a def.
    pub fn resolved(&self) -> Vec<String> {
        let packets = self.packets.lock().unwrap_or_else(|p| p.into_inner());
        let mut names: Vec<String> = packets
            .iter()
            .filter(|(_, p)| !p.overload_names().is_empty())
            .map(|(name, _)| name.clone())
            .collect();
        names.sort();
        names
    }
}

impl std::fmt::Display for OpNamespace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "torch.ops.{}", self.name)
    }
}

impl std::fmt::Debug for OpNamespace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "<module 'torch.ops.{}'>", self.name)
    }
}
