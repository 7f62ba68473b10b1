//! A group's instances read from DescribeAutoScalingGroups' answer without
//! the SDK's XML decoder. At 2,000 agents the group holds 4,000 instances
//! and is described every tick; the SDK's decoder (a scoped reader that
//! compares tag names on the way into and out of every element) was a
//! fifth of roller's CPU. `InstancesRead`, an interceptor set on the call,
//! reads the answer's `<Instances>` lists here with `xmlparser` (the
//! tokenizer the SDK itself uses) straight into the port's `GroupInstance`,
//! and hands the SDK the answer without them to decode the rest of each
//! group.
//!
//! Only the plain case is read here. An entity, CDATA, a comment or a
//! child element in a value an instance needs, a namespace prefix, an
//! `<Instances>` where the SDK's paths do not put it (or twice in one
//! group), a `ProtectedFromScaleIn` that is not `true` or `false`, an
//! instance without an `InstanceId` or a `LifecycleState` (the SDK fills
//! in its own), XML that does not nest: any of them
//! leaves the answer whole for the SDK, which reads it (or refuses it) as
//! it always did. The values are the SDK's: the first text of the element,
//! as it stands, and `""` for an empty element.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use aws_sdk_autoscaling::config::interceptors::BeforeDeserializationInterceptorContextMut;
use aws_sdk_autoscaling::config::{ConfigBag, Intercept, RuntimeComponents};
use aws_sdk_autoscaling::error::BoxError;
use aws_smithy_types::body::SdkBody;
use bytes::Bytes;
use http_body::{Body, Frame};
use xmlparser::{ElementEnd, Token, Tokenizer};

use super::launch_source;
use crate::roll::ports::auto_scaling::{GroupInstance, LifecycleState};
use crate::roll::ports::mixed_instances::TemplateRef;

/// An answer split in two.
#[derive(Debug, PartialEq)]
pub(super) struct Split {
    /// The answer without its groups' `<Instances>` elements.
    pub(super) body: Vec<u8>,
    /// The instances of each group member of the answer, in its order.
    pub(super) groups: Vec<Vec<GroupInstance>>,
}

/// The path to a group in the answer (Query protocol).
const GROUP_PATH: [&str; 4] = [
    "DescribeAutoScalingGroupsResponse",
    "DescribeAutoScalingGroupsResult",
    "AutoScalingGroups",
    "member",
];
/// Depths (elements above) of a group's `<Instances>`, of an instance's
/// `<member>`, of its fields and of its launch template's fields.
const INSTANCES: usize = 4;
const INSTANCE: usize = 5;
const FIELD: usize = 6;
const TEMPLATE_FIELD: usize = 7;

/// The fields of an instance the port keeps, as AWS sent them.
#[derive(Debug, Default)]
pub(super) struct InstanceFields<'a> {
    pub(super) id: Option<&'a str>,
    pub(super) availability_zone: Option<&'a str>,
    pub(super) lifecycle_state: Option<&'a str>,
    pub(super) health_status: Option<&'a str>,
    pub(super) template: Option<TemplateRef>,
    pub(super) configuration: Option<&'a str>,
    pub(super) protected_from_scale_in: Option<bool>,
    pub(super) instance_type: Option<&'a str>,
}

impl InstanceFields<'_> {
    /// The port's instance, `None` without an id.
    pub(super) fn instance(self) -> Option<GroupInstance> {
        Some(GroupInstance {
            id: self.id?.to_string(),
            availability_zone: self.availability_zone.unwrap_or_default().to_string(),
            lifecycle_state: LifecycleState::parse(self.lifecycle_state.unwrap_or_default()),
            health_status: self.health_status.unwrap_or_default().to_string(),
            launch_source: launch_source::source_from(self.template, self.configuration),
            protected_from_scale_in: self.protected_from_scale_in.unwrap_or(false),
            instance_type: self.instance_type.map(str::to_string),
        })
    }
}

/// Which value an open element holds.
#[derive(Clone, Copy, Debug)]
enum Field {
    Id,
    Zone,
    State,
    Health,
    Configuration,
    Protected,
    Type,
    TemplateId,
    TemplateName,
    TemplateVersion,
}

fn field(depth: usize, name: &str) -> Option<Field> {
    Some(match (depth, name) {
        (FIELD, "InstanceId") => Field::Id,
        (FIELD, "AvailabilityZone") => Field::Zone,
        (FIELD, "LifecycleState") => Field::State,
        (FIELD, "HealthStatus") => Field::Health,
        (FIELD, "LaunchConfigurationName") => Field::Configuration,
        (FIELD, "ProtectedFromScaleIn") => Field::Protected,
        (FIELD, "InstanceType") => Field::Type,
        (TEMPLATE_FIELD, "LaunchTemplateId") => Field::TemplateId,
        (TEMPLATE_FIELD, "LaunchTemplateName") => Field::TemplateName,
        (TEMPLATE_FIELD, "Version") => Field::TemplateVersion,
        _ => return None,
    })
}

/// Reads the instances out of a DescribeAutoScalingGroups answer; `None`
/// for anything but the plain case (see the module's comment).
pub(super) fn split(body: &[u8]) -> Option<Split> {
    let text = std::str::from_utf8(body).ok()?;
    let mut open: Vec<&str> = Vec::with_capacity(8);
    let mut groups: Vec<Vec<GroupInstance>> = Vec::new();
    let mut cuts: Vec<(usize, usize)> = Vec::new();
    let mut group_lists = 0;
    let mut roots = 0;
    // The group's `<Instances>` began here (and whether it had one).
    let mut list_start: Option<usize> = None;
    let mut listed = false;
    let mut instance: Option<InstanceFields<'_>> = None;
    // The value element open now, and its text once read.
    let mut value: Option<(Field, Option<&str>)> = None;
    for token in Tokenizer::from(text) {
        match token.ok()? {
            Token::ElementStart {
                prefix,
                local,
                span,
            } => {
                let name = local.as_str();
                if !prefix.is_empty() || value.is_some() {
                    return None;
                }
                let depth = open.len();
                let on_path = depth < GROUP_PATH.len() && open[..] == GROUP_PATH[..depth];
                let in_group = depth >= GROUP_PATH.len() && open[..4] == GROUP_PATH;
                if depth == 0 {
                    roots += 1;
                    if roots > 1 || name != GROUP_PATH[0] {
                        return None;
                    }
                }
                if on_path && depth == 2 && name == GROUP_PATH[2] {
                    group_lists += 1;
                    if group_lists > 1 {
                        return None;
                    }
                }
                if on_path && depth == 3 && name == GROUP_PATH[3] {
                    groups.push(Vec::new());
                    listed = false;
                }
                if name == "Instances" {
                    if !(in_group && depth == INSTANCES) || listed {
                        return None;
                    }
                    listed = true;
                    list_start = Some(span.start());
                }
                // An instance is open only inside an `<Instances>`'s
                // `<member>`: what opens below it is one of its fields.
                match (depth, instance.as_mut()) {
                    (INSTANCE, None) if list_start.is_some() && name == "member" => {
                        instance = Some(InstanceFields::default());
                    }
                    (FIELD, Some(i)) if name == "LaunchTemplate" => {
                        i.template = Some(TemplateRef::default());
                    }
                    (FIELD, Some(_)) => value = field(depth, name).map(|f| (f, None)),
                    (TEMPLATE_FIELD, Some(_)) if open[FIELD] == "LaunchTemplate" => {
                        value = field(depth, name).map(|f| (f, None));
                    }
                    _ => {}
                }
                open.push(name);
            }
            Token::ElementEnd { end, span } => {
                let name = match end {
                    ElementEnd::Open => continue,
                    ElementEnd::Close(prefix, local) => {
                        if !prefix.is_empty() || open.last() != Some(&local.as_str()) {
                            return None;
                        }
                        local.as_str()
                    }
                    ElementEnd::Empty => *open.last()?,
                };
                open.pop();
                let depth = open.len();
                if let Some((f, text)) = value.take() {
                    set(instance.as_mut()?, f, text.unwrap_or_default())?;
                    continue;
                }
                match depth {
                    INSTANCE if instance.is_some() => {
                        let fields = instance.take()?;
                        // The SDK reads a missing one as "no value was set".
                        fields.lifecycle_state?;
                        groups.last_mut()?.push(fields.instance()?);
                    }
                    INSTANCES if name == "Instances" => {
                        cuts.push((list_start.take()?, span.end()));
                    }
                    _ => {}
                }
            }
            Token::Text { text } => {
                if let Some((_, read)) = value.as_mut() {
                    let text = text.as_str();
                    if read.is_some() || text.contains('&') {
                        return None;
                    }
                    *read = Some(text);
                }
            }
            Token::Cdata { .. }
            | Token::Comment { .. }
            | Token::ProcessingInstruction { .. }
            | Token::DtdStart { .. }
            | Token::EmptyDtd { .. }
            | Token::EntityDeclaration { .. }
            | Token::DtdEnd { .. } => {
                if list_start.is_some() {
                    return None;
                }
            }
            Token::Declaration { .. } | Token::Attribute { .. } => {}
        }
    }
    if !open.is_empty() {
        return None;
    }
    let mut trimmed = Vec::with_capacity(body.len());
    let mut from = 0;
    for (start, end) in cuts {
        trimmed.extend_from_slice(&body[from..start]);
        from = end;
    }
    trimmed.extend_from_slice(&body[from..]);
    Some(Split {
        body: trimmed,
        groups,
    })
}

/// Keeps a value read; `None` for a `ProtectedFromScaleIn` the SDK would
/// refuse.
fn set<'a>(i: &mut InstanceFields<'a>, f: Field, text: &'a str) -> Option<()> {
    match f {
        Field::Id => i.id = Some(text),
        Field::Zone => i.availability_zone = Some(text),
        Field::State => i.lifecycle_state = Some(text),
        Field::Health => i.health_status = Some(text),
        Field::Configuration => i.configuration = Some(text),
        Field::Type => i.instance_type = Some(text),
        Field::Protected => i.protected_from_scale_in = Some(text.parse().ok()?),
        Field::TemplateId | Field::TemplateName | Field::TemplateVersion => {
            let template = i.template.get_or_insert_with(TemplateRef::default);
            let slot = match f {
                Field::TemplateId => &mut template.id,
                Field::TemplateName => &mut template.name,
                _ => &mut template.version,
            };
            *slot = Some(text.to_string());
        }
    }
    Some(())
}

/// Set on one DescribeAutoScalingGroups call: reads the instances of a
/// successful answer here (`split`) and hands the SDK the rest. After the
/// call, `take` gives each group member's instances, or `None` where the
/// SDK read them (the answer was not the plain case).
#[derive(Clone, Debug, Default)]
pub(super) struct InstancesRead {
    read: Arc<Mutex<Option<Vec<Vec<GroupInstance>>>>>,
}

impl InstancesRead {
    pub(super) fn take(&self) -> Option<Vec<Vec<GroupInstance>>> {
        self.read.lock().ok()?.take()
    }

    fn keep(&self, groups: Option<Vec<Vec<GroupInstance>>>) {
        if let Ok(mut read) = self.read.lock() {
            *read = groups;
        }
    }

    /// The body the SDK is to decode: `body` without its instances where
    /// they were read here, else `body` itself.
    fn split_off(&self, body: Bytes) -> Bytes {
        match split(&body) {
            Some(split) => {
                self.keep(Some(split.groups));
                Bytes::from(split.body)
            }
            None => body,
        }
    }
}

impl Intercept for InstancesRead {
    fn name(&self) -> &'static str {
        "roller::InstancesRead"
    }

    /// Once per attempt, before the SDK reads the answer's body.
    fn modify_before_deserialization(
        &self,
        context: &mut BeforeDeserializationInterceptorContextMut<'_>,
        _runtime_components: &RuntimeComponents,
        _cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        self.keep(None);
        let response = context.response_mut();
        if !response.status().is_success() {
            return Ok(());
        }
        let body = response.take_body();
        *response.body_mut() = match body.bytes() {
            Some(whole) => SdkBody::from(self.split_off(Bytes::copy_from_slice(whole))),
            None => SdkBody::from_body_1_x(Splitting {
                body,
                read: Vec::new(),
                ended: false,
                reader: self.clone(),
            }),
        };
        Ok(())
    }
}

/// An answer's body read whole, then given on as one frame without its
/// instances.
struct Splitting {
    body: SdkBody,
    read: Vec<u8>,
    ended: bool,
    reader: InstancesRead,
}

impl Body for Splitting {
    type Data = Bytes;
    type Error = aws_smithy_types::body::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        if this.ended {
            return Poll::Ready(None);
        }
        loop {
            match Pin::new(&mut this.body).poll_frame(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Some(Err(err))) => return Poll::Ready(Some(Err(err))),
                Poll::Ready(Some(Ok(frame))) => {
                    if let Ok(data) = frame.into_data() {
                        this.read.extend_from_slice(&data);
                    }
                }
                Poll::Ready(None) => {
                    this.ended = true;
                    let whole = Bytes::from(std::mem::take(&mut this.read));
                    let rest = this.reader.split_off(whole);
                    return Poll::Ready(Some(Ok(Frame::data(rest))));
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "group_instances_tests.rs"]
mod tests;
