//! A guided tour of the stack, printed for a reader who knows PyTorch.
//!
//! Run with `cargo run --release --example tour`. Each section shows one
//! layer; later issues add the dispatcher, kernels and tensors.

use aten::c10::dispatch_key_set::{
    get_runtime_dispatch_key_set, DEFAULT_EXCLUDED_SET, DEFAULT_INCLUDED_SET,
};
use aten::c10::local_dispatch_key_set::tls_local_dispatch_key_set;
use aten::c10::{AutoDispatchBelowAutograd, NUM_RUNTIME_ENTRIES};
use aten::{BackendComponent, DispatchKey, DispatchKeySet};

fn section(title: &str) {
    println!("\n== {title} ==");
}

fn main() {
    section("1. Dispatch keys");
    println!(
        "A CPU tensor that requires grad carries {}.",
        DispatchKeySet::from_keys(&[DispatchKey::CPU, DispatchKey::AutogradCPU])
    );
    println!(
        "CPU is a per-backend key: functionality {} crossed with backend {}.",
        DispatchKey::CPU.to_functionality_key(),
        DispatchKey::CPU.to_backend_component()
    );
    let cross = DispatchKeySet::from_keys(&[DispatchKey::AutogradCUDA, DispatchKey::CPU]);
    println!(
        "Key sets are cross products: {{AutogradCUDA, CPU}} is {cross} (raw 0x{:x}).",
        cross.raw_repr()
    );

    section("2. Priority: which kernel runs first");
    let tensor = DispatchKeySet::from_keys(&[
        DispatchKey::CPU,
        DispatchKey::AutogradCPU,
        DispatchKey::ADInplaceOrView,
    ]);
    println!("Keys of the call: {tensor}");
    let mut rest = tensor;
    let mut step = 1;
    while !rest.is_empty() {
        let k = rest.highest_priority_type_id();
        if k == DispatchKey::Undefined {
            break;
        }
        let role = if k.to_functionality_key() == DispatchKey::Dense {
            "the backend kernel computes the result"
        } else {
            "its kernel does its part and redispatches below itself"
        };
        println!(
            "  step {step}: {k:<16} (table slot {:>3}): {role}",
            k.dispatch_table_index()
        );
        rest = rest & DispatchKeySet::full_after(k);
        step += 1;
    }
    println!(
        "Every operator has a flat table of {NUM_RUNTIME_ENTRIES} slots, one per runtime key."
    );

    section("3. Thread-local state");
    println!("A new thread includes {DEFAULT_INCLUDED_SET}");
    println!("and excludes {DEFAULT_EXCLUDED_SET}.");
    {
        let _below = AutoDispatchBelowAutograd::new();
        let tls = tls_local_dispatch_key_set();
        let effective = (tensor | tls.included) - tls.excluded;
        println!(
            "Inside AutoDispatchBelowAutograd the same call starts at {} ({effective}).",
            effective.highest_priority_type_id()
        );
    }
    let tls = tls_local_dispatch_key_set();
    println!(
        "After the guard, it starts at {} again.",
        ((tensor | tls.included) - tls.excluded).highest_priority_type_id()
    );

    section("4. Alias keys");
    for alias in [
        DispatchKey::Autograd,
        DispatchKey::CompositeExplicitAutograd,
        DispatchKey::CompositeImplicitAutograd,
    ] {
        let keys = get_runtime_dispatch_key_set(alias);
        println!(
            "A kernel registered to {alias} fills {} runtime slots, e.g. CPU: {}, AutogradCPU: {}.",
            keys.iter().count(),
            keys.has(DispatchKey::CPU),
            keys.has(DispatchKey::AutogradCPU)
        );
    }
    println!(
        "Backends without their own autograd key use {}: HIP -> {}.",
        DispatchKey::AutogradOther,
        BackendComponent::HIPBit.autograd_key()
    );
}
