//! The core's integration tests, one binary: known-answer vectors from the
//! real clients, assignor simulations against real assignments, and
//! property tests of the parsers. All offline.

mod offline {
    mod assign;
    mod client_vectors;
    mod go_groups;
    mod hostile_parsers;
    mod kip848_versions;
    mod mixture;
    mod module_graph;
    mod node_groups;
    mod python_groups;
    mod sarama_sticky;
    mod streams;
    mod vectors;
}
