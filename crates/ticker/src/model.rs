//! The ticker's records and the two computations over them: the workers'
//! incremental join ([`Joiner`]) and the independent oracle that `verify`
//! recomputes from whole topics ([`expected`]). They are written apart on
//! purpose, so that verify does not share the workers' mistakes.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// A price tick on `market-updates`, keyed by its symbol.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tick {
    /// The feed run that wrote it.
    pub run: String,
    /// Its place in the run's one sequence of ticks and alerts.
    pub seq: u64,
    /// The symbol.
    pub symbol: String,
    /// The price, in rupiah.
    pub price: i64,
    /// When the feed produced it (ms since the epoch).
    pub ts_ms: i64,
}

/// Which way a price must cross an alert's threshold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// At or above the threshold.
    Above,
    /// At or below the threshold.
    Below,
}

/// "Tell `user` when `symbol` crosses `threshold`", on `notifications`,
/// keyed by its symbol. It fires once: on the first tick of the same run
/// after it (by `seq`) whose price is on the far side of the threshold.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Alert {
    /// The feed run that wrote it.
    pub run: String,
    /// Its place in the run's sequence.
    pub seq: u64,
    /// Unique across runs: `{run}-{seq}`.
    pub id: String,
    /// Who is told.
    pub user: String,
    /// The symbol.
    pub symbol: String,
    /// The price to cross.
    pub threshold: i64,
    /// The side.
    pub direction: Direction,
}

impl Alert {
    /// Whether a tick at `price` sets the alert off.
    pub fn triggered_by(&self, price: i64) -> bool {
        match self.direction {
            Direction::Above => price >= self.threshold,
            Direction::Below => price <= self.threshold,
        }
    }
}

/// A fired alert as Redis keeps it under `notif:{SYM}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fired {
    /// The user told.
    pub user: String,
    /// The threshold crossed.
    pub threshold: i64,
    /// Its direction.
    pub direction: Direction,
    /// The tick that crossed it.
    pub tick_seq: u64,
    /// That tick's price.
    pub price: i64,
}

/// The ten IDX symbols of the seed, with a starting price each.
pub const SYMBOLS: [(&str, i64); 10] = [
    ("BBCA", 9150),
    ("ANTM", 1600),
    ("ASII", 5025),
    ("UNVR", 2300),
    ("TLKM", 2900),
    ("BBRI", 4200),
    ("BMRI", 6100),
    ("GOTO", 70),
    ("ADRO", 2600),
    ("ICBP", 11000),
];

/// The highest price the feed takes or makes, in rupiah (10^12, far above
/// any share price). Every step of [`Generator::next`] multiplies a price by
/// at most 20 before dividing; under this bound that never leaves `i64`, and
/// the random walk is clamped to it so a long feed cannot climb out of it.
pub const MAX_PRICE: i64 = 1_000_000_000_000;

/// SplitMix64: a seeded, reproducible stream (the feed must be replayable
/// from its seed, not secure).
pub struct Rng(u64);

impl Rng {
    /// A stream from `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// One generated event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// A tick.
    Tick(Tick),
    /// An alert.
    Alert(Alert),
}

/// The feed's generator: a random walk per symbol, and now and then an alert
/// a few percent away from the current price.
pub struct Generator {
    run: String,
    seq: u64,
    rng: Rng,
    prices: Vec<(String, i64)>,
    users: u64,
}

impl Generator {
    /// A generator over `symbols` (with starting prices), `users` users,
    /// seeded. Refused: no symbol (there would be nothing to draw from) or a
    /// start price outside `1..=MAX_PRICE` (the walk's arithmetic would leave
    /// `i64`).
    pub fn new(
        run: &str,
        seed: u64,
        symbols: Vec<(String, i64)>,
        users: u64,
    ) -> Result<Generator, String> {
        if symbols.is_empty() {
            return Err("no symbols to generate events for".into());
        }
        if let Some((s, p)) = symbols.iter().find(|(_, p)| !(1..=MAX_PRICE).contains(p)) {
            return Err(format!(
                "{s}: start price {p} is outside 1..={MAX_PRICE} rupiah"
            ));
        }
        Ok(Generator {
            run: run.to_string(),
            seq: 0,
            rng: Rng::new(seed),
            prices: symbols,
            users: users.max(1),
        })
    }

    /// The next event, stamped `ts_ms`: one alert in five, ticks otherwise.
    pub fn next(&mut self, ts_ms: i64) -> Event {
        self.seq += 1;
        let i = self.rng.below(self.prices.len() as u64) as usize;
        let (symbol, price) = self.prices[i].clone();
        if self.rng.below(5) == 0 {
            // 0.5% .. 2% away, on either side.
            let pct = 5 + self.rng.below(16) as i64;
            let above = self.rng.below(2) == 0;
            let delta = (price * pct / 1000).max(1);
            let (threshold, direction) = if above {
                (price + delta, Direction::Above)
            } else {
                ((price - delta).max(1), Direction::Below)
            };
            return Event::Alert(Alert {
                run: self.run.clone(),
                seq: self.seq,
                id: format!("{}-{}", self.run, self.seq),
                user: format!("user-{}", self.rng.below(self.users)),
                symbol,
                threshold,
                direction,
            });
        }
        // A step of -0.6% .. +0.6%, at least one rupiah.
        let step = (price * 6 / 1000).max(1);
        let moved = price + (self.rng.below(2 * step as u64 + 1) as i64 - step);
        let moved = moved.clamp(1, MAX_PRICE);
        self.prices[i].1 = moved;
        Event::Tick(Tick {
            run: self.run.clone(),
            seq: self.seq,
            symbol,
            price: moved,
            ts_ms,
        })
    }
}

/// A write the join wants in Redis, for one symbol, in one transaction.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Write {
    /// The newest tick seen, with its offset in `market-updates`.
    pub tick: Option<(Tick, i64)>,
    /// Alerts fired since the last write.
    pub fired: Vec<(String, Fired)>,
}

/// Per symbol: the pending alerts and the ticks an alert still to come may
/// need. Alerts and ticks of one symbol arrive in order on their own
/// partitions but in any order relative to each other, so a tick is kept
/// until an alert of a later sequence number has been seen on the other side.
#[derive(Default)]
struct SymbolState {
    pending: Vec<Alert>,
    /// Ticks by run, in arrival (= sequence) order.
    ticks: HashMap<String, Vec<(u64, i64)>>,
    /// Highest alert sequence number seen, by run.
    alert_seq: HashMap<String, u64>,
}

/// The workers' incremental join, fed records as they come.
#[derive(Default)]
pub struct Joiner {
    symbols: BTreeMap<String, SymbolState>,
    writes: BTreeMap<String, Write>,
}

impl Joiner {
    /// Forgets everything: a new assignment replays its partitions.
    pub fn clear(&mut self) {
        self.symbols.clear();
        self.writes.clear();
    }

    /// A tick read at `offset`.
    pub fn tick(&mut self, t: Tick, offset: i64) {
        let st = self.symbols.entry(t.symbol.clone()).or_default();
        let w = self.writes.entry(t.symbol.clone()).or_default();
        st.pending.retain(|a| {
            if a.run == t.run && a.seq < t.seq && a.triggered_by(t.price) {
                w.fired.push((a.id.clone(), fired(a, t.seq, t.price)));
                false
            } else {
                true
            }
        });
        let later_alert = st.alert_seq.get(&t.run).copied().unwrap_or(0);
        let ticks = st.ticks.entry(t.run.clone()).or_default();
        ticks.push((t.seq, t.price));
        // Only an alert with a higher seq than every alert seen so far can
        // still come, and it needs only ticks after it.
        ticks.retain(|(s, _)| *s > later_alert);
        if w.tick.as_ref().is_none_or(|(_, o)| *o < offset) {
            w.tick = Some((t, offset));
        }
    }

    /// An alert: fired at once by a tick already seen after it, else pending.
    pub fn alert(&mut self, a: Alert) {
        let st = self.symbols.entry(a.symbol.clone()).or_default();
        let seen = st.alert_seq.entry(a.run.clone()).or_insert(0);
        *seen = (*seen).max(a.seq);
        let hit = st
            .ticks
            .get(&a.run)
            .and_then(|ts| ts.iter().find(|(s, p)| *s > a.seq && a.triggered_by(*p)))
            .copied();
        if let Some(ts) = st.ticks.get_mut(&a.run) {
            ts.retain(|(s, _)| *s > a.seq);
        }
        match hit {
            Some((seq, price)) => self
                .writes
                .entry(a.symbol.clone())
                .or_default()
                .fired
                .push((a.id.clone(), fired(&a, seq, price))),
            None => st.pending.push(a),
        }
    }

    /// The writes collected since the last call, by symbol.
    pub fn take_writes(&mut self) -> BTreeMap<String, Write> {
        std::mem::take(&mut self.writes)
    }
}

fn fired(a: &Alert, tick_seq: u64, price: i64) -> Fired {
    Fired {
        user: a.user.clone(),
        threshold: a.threshold,
        direction: a.direction,
        tick_seq,
        price,
    }
}

/// What should be in Redis after all of `ticks` (with their offsets) and
/// `alerts`: per symbol the last tick, and every alert that must have fired.
pub struct Expected {
    /// Symbol -> the tick with the highest offset.
    pub last_tick: BTreeMap<String, (Tick, i64)>,
    /// Alert id -> (symbol, what fired).
    pub fired: BTreeMap<String, (String, Fired)>,
    /// Alerts that no tick has set off (yet).
    pub pending: usize,
}

/// The oracle: for each alert, the first later tick of its run and symbol
/// that crosses it, found by scanning sorted ticks, independently of
/// [`Joiner`].
pub fn expected(ticks: &[(Tick, i64)], alerts: &[Alert]) -> Expected {
    let mut last_tick: BTreeMap<String, (Tick, i64)> = BTreeMap::new();
    let mut by_key: BTreeMap<(&str, &str), Vec<&Tick>> = BTreeMap::new();
    for (t, off) in ticks {
        match last_tick.get(&t.symbol) {
            Some((_, o)) if *o >= *off => {}
            _ => {
                last_tick.insert(t.symbol.clone(), (t.clone(), *off));
            }
        }
        by_key.entry((&t.run, &t.symbol)).or_default().push(t);
    }
    for v in by_key.values_mut() {
        v.sort_by_key(|t| t.seq);
    }
    let mut fired_map = BTreeMap::new();
    let mut pending = 0;
    for a in alerts {
        let hit = by_key
            .get(&(a.run.as_str(), a.symbol.as_str()))
            .and_then(|ts| ts.iter().find(|t| t.seq > a.seq && a.triggered_by(t.price)));
        match hit {
            Some(t) => {
                fired_map.insert(a.id.clone(), (a.symbol.clone(), fired(a, t.seq, t.price)));
            }
            None => pending += 1,
        }
    }
    Expected {
        last_tick,
        fired: fired_map,
        pending,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(seed: u64, n: usize) -> Vec<Event> {
        let symbols = SYMBOLS.iter().map(|(s, p)| (s.to_string(), *p)).collect();
        let mut g = Generator::new("r", seed, symbols, 50).unwrap();
        (0..n).map(|i| g.next(i as i64)).collect()
    }

    /// At the highest price the walk and the alerts stay in range (a debug
    /// build panics on an overflow), and a price past it is refused.
    #[test]
    fn prices_stay_within_the_documented_maximum() {
        let top = vec![("TOP".to_string(), MAX_PRICE), ("ONE".to_string(), 1)];
        let mut g = Generator::new("r", 3, top, 5).unwrap();
        for i in 0..20_000 {
            match g.next(i) {
                Event::Tick(t) => assert!((1..=MAX_PRICE).contains(&t.price), "{t:?}"),
                Event::Alert(a) => assert!(a.threshold >= 1, "{a:?}"),
            }
        }
        for bad in [MAX_PRICE + 1, i64::MAX, 0, -5] {
            let e = Generator::new("r", 1, vec![("X".into(), bad)], 5).err();
            assert!(e.is_some_and(|e| e.contains(&bad.to_string())), "{bad}");
        }
        assert!(Generator::new("r", 1, vec![], 5).is_err());
    }

    #[test]
    fn the_generator_is_reproducible_from_its_seed() {
        assert_eq!(events(7, 500), events(7, 500));
        assert_ne!(events(7, 500), events(8, 500));
        let alerts = events(7, 5000)
            .iter()
            .filter(|e| matches!(e, Event::Alert(_)))
            .count();
        assert!((800..1200).contains(&alerts), "{alerts}");
    }

    /// The join agrees with the oracle whatever the interleaving of the two
    /// topics, as long as each topic's records of a symbol keep their order.
    #[test]
    fn the_join_matches_the_oracle_for_any_interleaving() {
        for seed in 0..20u64 {
            let ev = events(seed, 3000);
            let ticks: Vec<(Tick, i64)> = ev
                .iter()
                .filter_map(|e| match e {
                    Event::Tick(t) => Some(t.clone()),
                    _ => None,
                })
                .enumerate()
                .map(|(i, t)| (t, i as i64))
                .collect();
            let alerts: Vec<Alert> = ev
                .iter()
                .filter_map(|e| match e {
                    Event::Alert(a) => Some(a.clone()),
                    _ => None,
                })
                .collect();
            let want = expected(&ticks, &alerts);
            // Interleave the two streams at random: each in its own order.
            let mut rng = Rng::new(seed ^ 0xabc);
            let (mut i, mut j) = (0, 0);
            let mut join = Joiner::default();
            let mut got: BTreeMap<String, Fired> = BTreeMap::new();
            while i < ticks.len() || j < alerts.len() {
                let take_tick = j >= alerts.len() || (i < ticks.len() && rng.below(3) != 0);
                if take_tick {
                    join.tick(ticks[i].0.clone(), ticks[i].1);
                    i += 1;
                } else {
                    join.alert(alerts[j].clone());
                    j += 1;
                }
                for (_, w) in join.take_writes() {
                    for (id, f) in w.fired {
                        assert!(got.insert(id.clone(), f).is_none(), "{id} fired twice");
                    }
                }
            }
            let want_fired: BTreeMap<String, Fired> =
                want.fired.into_iter().map(|(id, (_, f))| (id, f)).collect();
            assert_eq!(got, want_fired, "seed {seed}");
        }
    }
}
