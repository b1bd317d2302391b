//! The commands: each turns its flags into values, talks to Kafka and Redis
//! through partwise's adapters, and returns an exit code (0 ok, 1 findings)
//! or an error (exit 2).

mod counter;
mod demo;
mod drill;
mod feed;
mod join;
mod plan;
mod predict;
mod sink;
mod up;
mod verify;
mod worker;

pub use demo::{demo, DemoArgs};
pub use feed::{feed, FeedArgs};
pub use join::{join, JoinArgs};
pub use up::{up, UpArgs};
pub use verify::{verify, VerifyArgs};
pub use worker::{worker, WorkerArgs};
