//! The TOML mirror of a topology file as serde reads it: the raw sections,
//! with the spans the validator needs to point at a bad value.
//!
//! serde's own errors (an unknown field, a value of the wrong type) pass
//! through as they are. The three it would word badly are made here instead,
//! with payloads this module owns: a missing required field ([`Missing`],
//! which [`missing_field`] reads back to name the field in the error's
//! path), an integer field given something else ("expected an integer", not
//! serde's "expected i64"), and a member list that is none of the three
//! shapes. So the parser never has to read serde's wording to know what
//! went wrong.

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::fmt;
use std::marker::PhantomData;
use toml::Spanned;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFile {
    #[serde(default)]
    pub topic: Vec<RawTopic>,
    #[serde(default)]
    pub copartition: Vec<RawGroup>,
    #[serde(default)]
    pub consumer_group: Vec<RawConsumerGroup>,
    #[serde(default)]
    pub redis_family: Vec<RawFamily>,
}

/// An integer field: any TOML integer, range-checked by the validator.
pub(super) struct Int(pub i64);

impl<'de> Deserialize<'de> for Int {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Int, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Int;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an integer")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Int, E> {
                Ok(Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Int, E> {
                i64::try_from(v)
                    .map(Int)
                    .map_err(|_| E::invalid_value(de::Unexpected::Unsigned(v), &self))
            }
        }
        d.deserialize_i64(V)
    }
}

/// The error payload for a required field that is absent. serde's derive
/// would say the same words; making them here means the field's name comes
/// back from a text this module wrote, not from serde's.
struct Missing(&'static str);

const MISSING: &str = "missing field `";

impl fmt::Display for Missing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{MISSING}{}`", self.0)
    }
}

/// The field named by a [`Missing`] payload, when `message` is one.
pub(super) fn missing_field(message: &str) -> Option<&str> {
    let name = message.strip_prefix(MISSING)?.strip_suffix('`')?;
    (!name.contains('`')).then_some(name)
}

/// A section with required fields, read first as its `Partial` (every field
/// optional) so that the check for what is missing is ours.
trait Section: Sized {
    /// The struct name in serde's "expected struct ..." message.
    const NAME: &'static str;
    type Partial;
    /// The section, or the first required field (in declaration order, as
    /// serde's derive reports it) that is absent.
    fn complete(p: Self::Partial) -> Result<Self, &'static str>;
}

fn section<'de, T, D>(d: D) -> Result<T, D::Error>
where
    T: Section,
    T::Partial: Deserialize<'de>,
    D: Deserializer<'de>,
{
    struct V<T>(PhantomData<T>);
    impl<'de, T> Visitor<'de> for V<T>
    where
        T: Section,
        T::Partial: Deserialize<'de>,
    {
        type Value = T;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "struct {}", T::NAME)
        }
        // The error is raised inside the table's own deserialization, so
        // toml gives it the table's span, as it did serde's missing_field.
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
            let p = T::Partial::deserialize(de::value::MapAccessDeserializer::new(map))?;
            T::complete(p).map_err(|f| de::Error::custom(Missing(f)))
        }
        // serde's derive also reads a struct from an array, field by field.
        fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<T, A::Error> {
            let p = T::Partial::deserialize(de::value::SeqAccessDeserializer::new(seq))?;
            T::complete(p).map_err(|f| de::Error::custom(Missing(f)))
        }
    }
    d.deserialize_any(V(PhantomData))
}

/// A section's full struct, its partial one and their [`Section`] impl from
/// one field list: the required fields (checked in this order, as serde's
/// derive would), then the optional ones with their serde attributes.
macro_rules! section {
    ($name:ident / $partial:ident as $lit:literal {
        $($req:ident: $rty:ty,)*
        ; $($(#[$meta:meta])* $opt:ident: $oty:ty,)*
    }) => {
        pub(super) struct $name {
            $(pub $req: $rty,)*
            $(pub $opt: $oty,)*
        }

        #[derive(Deserialize)]
        #[serde(deny_unknown_fields, rename = $lit)]
        pub(super) struct $partial {
            $($req: Option<$rty>,)*
            $($(#[$meta])* $opt: $oty,)*
        }

        impl Section for $name {
            const NAME: &'static str = $lit;
            type Partial = $partial;
            fn complete(p: $partial) -> Result<$name, &'static str> {
                Ok($name {
                    $($req: p.$req.ok_or(stringify!($req))?,)*
                    $($opt: p.$opt,)*
                })
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<$name, D::Error> {
                section(d)
            }
        }
    };
}

section!(RawTopic / PartialTopic as "RawTopic" {
    name: Spanned<String>,
    partitions: Spanned<Int>,
    ;
    key: Option<String>,
    #[serde(default)]
    producer: Vec<RawProducer>,
});

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawProducer {
    pub name: Option<String>,
    #[serde(alias = "client")]
    pub partitioner: Option<Spanned<String>>,
    pub key_format: Option<Spanned<String>>,
    #[serde(default)]
    pub keyless: bool,
}

section!(RawGroup / PartialGroup as "RawGroup" {
    name: Spanned<String>,
    topics: Spanned<Vec<Spanned<String>>>,
    ;
});

section!(RawConsumerGroup / PartialConsumerGroup as "RawConsumerGroup" {
    name: Spanned<String>,
    assignor: Spanned<String>,
    members: Spanned<RawMembers>,
    subscriptions: Spanned<Vec<Spanned<String>>>,
    ;
});

/// `members = 3`, `members = ["pod-a", "pod-b"]` or `members = "1..8"`.
pub(super) enum RawMembers {
    Count(i64),
    Ids(Vec<String>),
    Range(String),
}

/// The one message for a member list of none of the three shapes.
const MEMBERS_SHAPE: &str =
    "expected a member count, a list of member ids or a range such as \"1..8\"";

impl<'de> Deserialize<'de> for RawMembers {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<RawMembers, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawMembers;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(MEMBERS_SHAPE)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawMembers, E> {
                Ok(RawMembers::Count(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawMembers, E> {
                i64::try_from(v)
                    .map(RawMembers::Count)
                    .map_err(|_| E::custom(MEMBERS_SHAPE))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawMembers, E> {
                Ok(RawMembers::Range(v.to_string()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RawMembers, A::Error> {
                // Every element is read before judging, so the error points
                // at the whole list, not at the first element that is not text.
                let mut ids = Vec::new();
                let mut all_text = true;
                while let Some(e) = seq.next_element::<MaybeText>()? {
                    match e.0 {
                        Some(s) if all_text => ids.push(s),
                        _ => all_text = false,
                    }
                }
                if all_text {
                    Ok(RawMembers::Ids(ids))
                } else {
                    Err(de::Error::custom(MEMBERS_SHAPE))
                }
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<RawMembers, E> {
                Err(E::custom(MEMBERS_SHAPE))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<RawMembers, E> {
                Err(E::custom(MEMBERS_SHAPE))
            }
            fn visit_i128<E: de::Error>(self, _: i128) -> Result<RawMembers, E> {
                Err(E::custom(MEMBERS_SHAPE))
            }
            fn visit_u128<E: de::Error>(self, _: u128) -> Result<RawMembers, E> {
                Err(E::custom(MEMBERS_SHAPE))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawMembers, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Err(de::Error::custom(MEMBERS_SHAPE))
            }
        }
        d.deserialize_any(V)
    }
}

/// Any TOML value, keeping it only when it is text.
struct MaybeText(Option<String>);

impl<'de> Deserialize<'de> for MaybeText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<MaybeText, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = MaybeText;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<MaybeText, E> {
                Ok(MaybeText(Some(v.to_string())))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<MaybeText, E> {
                Ok(MaybeText(None))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<MaybeText, E> {
                Ok(MaybeText(None))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<MaybeText, E> {
                Ok(MaybeText(None))
            }
            fn visit_i128<E: de::Error>(self, _: i128) -> Result<MaybeText, E> {
                Ok(MaybeText(None))
            }
            fn visit_u128<E: de::Error>(self, _: u128) -> Result<MaybeText, E> {
                Ok(MaybeText(None))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<MaybeText, E> {
                Ok(MaybeText(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<MaybeText, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(MaybeText(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<MaybeText, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(MaybeText(None))
            }
        }
        d.deserialize_any(V)
    }
}

section!(RawFamily / PartialFamily as "RawFamily" {
    name: Spanned<String>,
    patterns: Spanned<Vec<Spanned<String>>>,
    ;
});
