//! Host ports an app's tasks must have: a task that needs a fixed port of
//! its host leaves no room for another of the same app on that agent, as
//! a `hostname UNIQUE` constraint does. Marathon says it three ways (its
//! ports page): `requirePorts: true` with non-zero `portDefinitions`
//! ports (`ports` before 0.16) in host networking, or a non-zero
//! `hostPort` in a container's `portMappings` (`container.docker.
//! portMappings` before 1.5; BRIDGE and USER networking). A port of 0, or
//! a `hostPort` left out, is one Marathon picks from the offer: no limit.
//!
//! Read loosely, as constraints are: a shape other than these (a port
//! that is not a whole number, an entry that is neither a number nor an
//! object) is no fixed port, never an error.

use std::fmt;

use serde::Deserialize;
use serde::de::{IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::lenient::Number;

/// An app's `container`, as far as its port mappings go.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WireContainer {
    #[serde(default)]
    port_mappings: Ports,
    #[serde(default)]
    docker: Option<WireDocker>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireDocker {
    #[serde(default)]
    port_mappings: Ports,
}

/// A list of ports: whether it has any entry, and any non-zero port
/// (`port` of a port definition, `hostPort` of a mapping, or the number
/// itself in the old `ports`).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Ports {
    any: bool,
    fixed: bool,
}

/// Whether an app's tasks each need a fixed host port: at most one of
/// them per agent.
pub(crate) fn one_per_host(
    require_ports: Option<bool>,
    port_definitions: Ports,
    ports: Ports,
    container: Option<&WireContainer>,
) -> bool {
    let mappings = container.map_or(Ports::default(), |c| {
        let docker = c
            .docker
            .as_ref()
            .map_or(Ports::default(), |d| d.port_mappings);
        Ports {
            any: c.port_mappings.any || docker.any,
            fixed: c.port_mappings.fixed || docker.fixed,
        }
    });
    if mappings.any {
        // Bridged or user networking: the mappings say it, and
        // `requirePorts` does not apply.
        return mappings.fixed;
    }
    require_ports == Some(true) && (port_definitions.fixed || ports.fixed)
}

impl<'de> Deserialize<'de> for Ports {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Ports, D::Error> {
        deserializer.deserialize_any(ListVisitor)
    }
}

struct ListVisitor;

impl<'de> Visitor<'de> for ListVisitor {
    type Value = Ports;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of ports")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Ports, A::Error> {
        let mut ports = Ports::default();
        while let Some(Port(fixed)) = seq.next_element::<Port>()? {
            ports.any = true;
            ports.fixed |= fixed;
        }
        Ok(ports)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ports, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Ports::default())
    }
    fn visit_unit<E>(self) -> Result<Ports, E> {
        Ok(Ports::default())
    }
    fn visit_bool<E>(self, _: bool) -> Result<Ports, E> {
        Ok(Ports::default())
    }
    fn visit_i64<E>(self, _: i64) -> Result<Ports, E> {
        Ok(Ports::default())
    }
    fn visit_u64<E>(self, _: u64) -> Result<Ports, E> {
        Ok(Ports::default())
    }
    fn visit_f64<E>(self, _: f64) -> Result<Ports, E> {
        Ok(Ports::default())
    }
    fn visit_str<E>(self, _: &str) -> Result<Ports, E> {
        Ok(Ports::default())
    }
}

/// One entry of a list of ports: whether it fixes a host port (a whole
/// number of at least 1: itself, or its `port` / `hostPort`).
struct Port(bool);

fn fixes(port: f64) -> bool {
    port >= 1.0 && port.fract() == 0.0
}

impl<'de> Deserialize<'de> for Port {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Port, D::Error> {
        deserializer.deserialize_any(PortVisitor)
    }
}

/// A number is the port itself; an object holds it under `port` or
/// `hostPort` (read as `Number`s); anything else fixes none.
struct PortVisitor;

impl<'de> Visitor<'de> for PortVisitor {
    type Value = Port;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a port")
    }
    fn visit_u64<E>(self, n: u64) -> Result<Port, E> {
        Ok(Port(fixes(n as f64)))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Port, E> {
        Ok(Port(fixes(n as f64)))
    }
    fn visit_f64<E>(self, n: f64) -> Result<Port, E> {
        Ok(Port(fixes(n)))
    }
    fn visit_bool<E>(self, _: bool) -> Result<Port, E> {
        Ok(Port(false))
    }
    fn visit_str<E>(self, _: &str) -> Result<Port, E> {
        Ok(Port(false))
    }
    fn visit_unit<E>(self) -> Result<Port, E> {
        Ok(Port(false))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Port, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Port(false))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Port, A::Error> {
        let mut fixed = false;
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Port => fixed |= map.next_value::<Number>()?.0.is_some_and(fixes),
                Key::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Port(fixed))
    }
}

/// The keys of an entry that name a host port.
enum Key {
    Port,
    Other,
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Key, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a field name")
            }
            fn visit_str<E>(self, key: &str) -> Result<Key, E> {
                Ok(match key {
                    "port" | "hostPort" => Key::Port,
                    _ => Key::Other,
                })
            }
        }
        deserializer.deserialize_identifier(KeyVisitor)
    }
}
