//! Registration listeners run without the dispatcher's lock: a listener may
//! look operators up, define operators and drop registrations on the same
//! dispatcher, and it hears the events in the order the changes happened
//! (PyTorch's `OpRegistrationListener`, without its re-entrancy deadlock).

use std::sync::{Arc, Mutex};

use aten_boxing::schema::OperatorName;
use aten_dispatch::{Dispatcher, Library, LibraryKind, RegistrationEvent};

fn name(text: &str) -> OperatorName {
    OperatorName::parse(text).unwrap()
}

fn fragment(d: &Dispatcher) -> Library {
    Library::with_dispatcher(d, LibraryKind::Fragment, "test", None, "listeners.rs", 1).unwrap()
}

fn describe(e: &RegistrationEvent) -> String {
    match e {
        RegistrationEvent::OperatorRegistered(n) => format!("+{n}"),
        RegistrationEvent::OperatorDeregistered(n) => format!("-{n}"),
    }
}

#[test]
fn a_listener_can_look_up_the_operator_it_hears_of() {
    let d = Dispatcher::new();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (lookup, sink) = (d.clone(), Arc::clone(&seen));
    let _listener = d.add_registration_listener(move |e| {
        // Before the fix this took the dispatcher's mutex a second time,
        // inside `def()`, and never returned.
        if let RegistrationEvent::OperatorRegistered(n) = e {
            let schema = lookup.find_schema(n).and_then(|op| op.schema());
            let all = lookup.all_op_names().len();
            sink.lock()
                .unwrap()
                .push(format!("{n}: {} of {all}", schema.unwrap()));
        }
    });
    let mut lib = fragment(&d);
    lib.def("a(Tensor x) -> Tensor").unwrap();
    lib.def("b(Tensor x, int n) -> Tensor").unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        [
            "test::a: test::a(Tensor x) -> Tensor of 1",
            "test::b: test::b(Tensor x, int n) -> Tensor of 2"
        ]
    );
}

#[test]
fn replaying_existing_operators_to_a_new_listener_can_look_them_up() {
    let d = Dispatcher::new();
    let mut lib = fragment(&d);
    // Def order differs from name order: the replay follows the defs.
    lib.def("z(Tensor x) -> Tensor").unwrap();
    lib.def("m(Tensor x) -> Tensor").unwrap();
    lib.def("a(Tensor x) -> Tensor").unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (lookup, sink) = (d.clone(), Arc::clone(&seen));
    let listener = d.add_registration_listener(move |e| {
        if let RegistrationEvent::OperatorRegistered(n) = e {
            assert!(lookup.find_schema_or_throw(&n.to_string(), "").is_ok());
        }
        sink.lock().unwrap().push(describe(e));
    });
    assert_eq!(*seen.lock().unwrap(), ["+test::z", "+test::m", "+test::a"]);
    drop(lib);
    drop(listener);
    assert_eq!(
        *seen.lock().unwrap(),
        ["+test::z", "+test::m", "+test::a", "-test::z", "-test::m", "-test::a"]
    );
}

#[test]
fn a_listener_can_register_and_deregister_on_the_same_dispatcher() {
    let d = Dispatcher::new();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let shadows: Arc<Mutex<Vec<Library>>> = Arc::default();
    let (inner, sink, keep) = (d.clone(), Arc::clone(&seen), Arc::clone(&shadows));
    let _listener = d.add_registration_listener(move |e| {
        sink.lock().unwrap().push(describe(e));
        match e {
            // Every operator gets a shadow operator, defined from inside the
            // listener.
            RegistrationEvent::OperatorRegistered(n) if !n.name().contains("shadow") => {
                let mut lib = fragment(&inner);
                lib.def(&format!("{}_shadow(Tensor x) -> Tensor", n.name()))
                    .unwrap();
                keep.lock().unwrap().push(lib);
            }
            // Removing an operator removes every shadow, from inside the
            // listener.
            RegistrationEvent::OperatorDeregistered(n) if !n.name().contains("shadow") => {
                keep.lock().unwrap().clear();
            }
            _ => {}
        }
    });
    let mut lib = fragment(&d);
    lib.def("a(Tensor x) -> Tensor").unwrap();
    assert!(d.find_schema(&name("test::a_shadow")).is_some());
    drop(lib);
    assert!(d.find_op(&name("test::a_shadow")).is_none());
    assert_eq!(
        *seen.lock().unwrap(),
        ["+test::a", "+test::a_shadow", "-test::a", "-test::a_shadow"]
    );
}

#[test]
fn events_from_several_threads_arrive_in_the_order_of_the_changes() {
    let d = Dispatcher::new();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (lookup, sink) = (d.clone(), Arc::clone(&seen));
    let _listener = d.add_registration_listener(move |e| {
        // Re-entering the dispatcher from every event, on whichever thread
        // delivers it.
        let _ = lookup.all_op_names();
        sink.lock().unwrap().push(describe(e));
    });
    std::thread::scope(|s| {
        for t in 0..4 {
            let d = &d;
            s.spawn(move || {
                for i in 0..25 {
                    let mut lib = fragment(d);
                    lib.def(&format!("op_{t}_{i}(Tensor x) -> Tensor")).unwrap();
                    drop(lib);
                }
            });
        }
    });
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 200);
    // Each thread's changes reach the listener in the order it made them.
    for t in 0..4 {
        let prefix = format!("test::op_{t}_");
        let mine: Vec<&String> = seen
            .iter()
            .filter(|e| e[1..].starts_with(&prefix))
            .collect();
        let expected: Vec<String> = (0..25)
            .flat_map(|i| [format!("+{prefix}{i}"), format!("-{prefix}{i}")])
            .collect();
        assert_eq!(mine, expected.iter().collect::<Vec<_>>());
    }
}
