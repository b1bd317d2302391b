//! How results are printed, for every command that prints them: a command
//! module parses its flags and makes its one library call, and hands the
//! result to a renderer here; no command imports another's printing.

pub mod group;
