//! An instance as EC2 sees it, and how it is matched to its Mesos agent
//! (the environment's `match`: private IP, private DNS name, or an agent
//! attribute carrying the instance id): pure pairing, no I/O.
//! `auto_scaling` re-exports both, where the roll has always found them.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;
use std::time::SystemTime;

/// One instance as EC2 sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ec2Instance {
    pub(crate) id: String,
    pub(crate) private_ip: Option<IpAddr>,
    pub(crate) private_dns_name: Option<String>,
    /// `pending`, `running`, `shutting-down`, `terminated`, `stopping`, `stopped`.
    pub(crate) state: String,
    pub(crate) launch_time: Option<SystemTime>,
    pub(crate) availability_zone: Option<String>,
}

/// How an EC2 instance is recognised among the Mesos agents.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) enum AgentMatch {
    /// The agent's IP (from its pid `slave(1)@IP:5051`) is the instance's
    /// private IP. The default: it holds whatever the agent's hostname is.
    #[default]
    PrivateIp,
    /// The agent's hostname is the instance's private DNS name.
    PrivateDns,
    /// The agent carries the instance id in the named attribute.
    Attribute(String),
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("unknown agent match '{0}': expected ip, dns or attribute:NAME")]
pub(crate) struct AgentMatchParseError(String);

impl FromStr for AgentMatch {
    type Err = AgentMatchParseError;

    fn from_str(s: &str) -> Result<AgentMatch, AgentMatchParseError> {
        match s {
            "ip" => Ok(AgentMatch::PrivateIp),
            "dns" => Ok(AgentMatch::PrivateDns),
            _ => match s.strip_prefix("attribute:") {
                Some(name) if !name.trim().is_empty() => {
                    Ok(AgentMatch::Attribute(name.trim().to_string()))
                }
                _ => Err(AgentMatchParseError(s.to_string())),
            },
        }
    }
}

impl fmt::Display for AgentMatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AgentMatch::PrivateIp => f.write_str("ip"),
            AgentMatch::PrivateDns => f.write_str("dns"),
            AgentMatch::Attribute(name) => write!(f, "attribute:{name}"),
        }
    }
}

/// A Mesos agent, only as far as matching needs it. The Mesos port has its
/// own richer type; the roll builds this one from it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct AgentIdentity {
    pub(crate) id: String,
    pub(crate) hostname: String,
    pub(crate) ip: Option<IpAddr>,
    /// Attributes as text (Mesos SCALAR attributes in their decimal form).
    pub(crate) attributes: BTreeMap<String, String>,
}

/// Instances and agents paired up, and what found no partner.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct AgentMatches {
    /// (instance id, agent id)
    pub(crate) matched: Vec<(String, String)>,
    /// Instances with no agent: still booting, or their agent never came.
    pub(crate) unmatched_instances: Vec<String>,
    /// Agents with no instance: outside this group, or an instance gone
    /// while its agent is still registered.
    pub(crate) unmatched_agents: Vec<String>,
    /// Keys that more than one agent claims (e.g. an IP reused by a new
    /// instance while the old agent is still registered): never guessed,
    /// every agent claiming it stays unmatched, and its instance too.
    pub(crate) ambiguous: Vec<String>,
}

/// What `how` recognises `instance` by among the agents (its private IP,
/// its private DNS name, or its id), `None` while EC2 has not said it. An
/// instance keeps it for its life: its primary private IP and DNS name
/// never change.
pub(crate) fn instance_key(how: &AgentMatch, instance: &Ec2Instance) -> Option<String> {
    match how {
        AgentMatch::PrivateIp => instance.private_ip.map(|ip| ip.to_string()),
        AgentMatch::PrivateDns => instance
            .private_dns_name
            .as_deref()
            .filter(|n| !n.is_empty())
            .map(|n| n.to_ascii_lowercase()),
        AgentMatch::Attribute(_) => Some(instance.id.clone()),
    }
}

/// Pairs instances with agents by `how`. Pure: no I/O, same input, same
/// output (in the order of `instances`, then of `agents`).
pub(crate) fn match_agents(
    how: &AgentMatch,
    instances: &[Ec2Instance],
    agents: &[AgentIdentity],
) -> AgentMatches {
    let agent_key = |a: &AgentIdentity| -> Option<String> {
        match how {
            AgentMatch::PrivateIp => a.ip.map(|ip| ip.to_string()),
            AgentMatch::PrivateDns => Some(a.hostname.to_ascii_lowercase()),
            AgentMatch::Attribute(name) => a.attributes.get(name).map(|v| v.trim().to_string()),
        }
    };

    let mut by_key: HashMap<String, Vec<usize>> = HashMap::new();
    for (n, agent) in agents.iter().enumerate() {
        if let Some(key) = agent_key(agent) {
            by_key.entry(key).or_default().push(n);
        }
    }

    let mut out = AgentMatches::default();
    let mut agent_taken = vec![false; agents.len()];
    for instance in instances {
        let candidates = instance_key(how, instance).and_then(|k| by_key.get(&k).map(|v| (k, v)));
        match candidates {
            Some((_, found)) if found.len() == 1 => {
                agent_taken[found[0]] = true;
                out.matched
                    .push((instance.id.clone(), agents[found[0]].id.clone()));
            }
            Some((key, _)) => {
                out.ambiguous.push(key);
                out.unmatched_instances.push(instance.id.clone());
            }
            None => out.unmatched_instances.push(instance.id.clone()),
        }
    }
    for (n, agent) in agents.iter().enumerate() {
        if !agent_taken[n] {
            out.unmatched_agents.push(agent.id.clone());
        }
    }
    out
}
