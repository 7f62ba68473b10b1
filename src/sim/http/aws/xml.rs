//! The XML the AWS Query protocol answers with: a tiny writer (elements,
//! escaped text), the success and error envelopes of Auto Scaling
//! (`awsQuery`) and EC2 (`ec2Query`), which differ, and AWS's timestamp
//! format. The simulator's own writer: nothing here comes from the SDK.

use std::fmt::Write as _;

pub(super) const AUTOSCALING_NS: &str = "http://autoscaling.amazonaws.com/doc/2011-01-01/";
pub(super) const EC2_NS: &str = "http://ec2.amazonaws.com/doc/2016-11-15/";
pub(super) const CLOUDWATCH_NS: &str = "http://monitoring.amazonaws.com/doc/2010-08-01/";

/// An XML document under construction. Elements are closed by name, so a
/// mismatch shows up in the tests that parse every answer with the SDK.
#[derive(Default)]
pub(super) struct Xml {
    out: String,
}

impl Xml {
    pub(super) fn new() -> Xml {
        Xml::default()
    }

    pub(super) fn open(&mut self, tag: &str) -> &mut Xml {
        self.out.push('<');
        self.out.push_str(tag);
        self.out.push('>');
        self
    }

    pub(super) fn close(&mut self, tag: &str) -> &mut Xml {
        self.out.push_str("</");
        self.out.push_str(tag);
        self.out.push('>');
        self
    }

    /// `<tag>text</tag>`, the text escaped.
    pub(super) fn leaf(&mut self, tag: &str, text: impl std::fmt::Display) -> &mut Xml {
        self.open(tag);
        let mut raw = String::new();
        let _ = write!(raw, "{text}");
        escape_into(&mut self.out, &raw);
        self.close(tag)
    }

    /// A leaf only when there is a value (AWS leaves absent members out).
    pub(super) fn opt_leaf(&mut self, tag: &str, text: Option<impl std::fmt::Display>) -> &mut Xml {
        if let Some(text) = text {
            self.leaf(tag, text);
        }
        self
    }

    /// `<tag/>`: an empty list or an empty string.
    pub(super) fn empty(&mut self, tag: &str) -> &mut Xml {
        self.out.push('<');
        self.out.push_str(tag);
        self.out.push_str("/>");
        self
    }

    /// A list of strings, each in `item` (`member` for Auto Scaling).
    pub(super) fn list<'a>(
        &mut self,
        tag: &str,
        item: &str,
        values: impl IntoIterator<Item = &'a str>,
    ) -> &mut Xml {
        self.open(tag);
        for v in values {
            self.leaf(item, v);
        }
        self.close(tag)
    }

    pub(super) fn finish(self) -> String {
        self.out
    }
}

fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
}

/// An Auto Scaling answer: `<{Action}Response xmlns=…>`, then
/// `<{Action}Result>` with `result` when the action has output (AWS omits
/// the Result element for actions without one), then the request id.
pub(super) fn autoscaling_response(
    action: &str,
    result: Option<String>,
    request_id: &str,
) -> String {
    query_response(AUTOSCALING_NS, action, result, request_id)
}

/// A CloudWatch answer: the same `awsQuery` envelope as Auto Scaling's,
/// in CloudWatch's namespace.
pub(super) fn cloudwatch_response(
    action: &str,
    result: Option<String>,
    request_id: &str,
) -> String {
    query_response(CLOUDWATCH_NS, action, result, request_id)
}

fn query_response(ns: &str, action: &str, result: Option<String>, request_id: &str) -> String {
    let mut x = Xml::new();
    x.out.push_str(r#"<?xml version="1.0" encoding="UTF-8"?>"#);
    let _ = write!(x.out, r#"<{action}Response xmlns="{ns}">"#);
    if let Some(result) = result {
        let _ = write!(x.out, "<{action}Result>{result}</{action}Result>");
    }
    x.open("ResponseMetadata")
        .leaf("RequestId", request_id)
        .close("ResponseMetadata");
    let _ = write!(x.out, "</{action}Response>");
    x.finish()
}

/// An EC2 answer: no Result wrapper, the request id first, in camelCase.
pub(super) fn ec2_response(action: &str, body: &str, request_id: &str) -> String {
    let mut x = Xml::new();
    x.out.push_str(r#"<?xml version="1.0" encoding="UTF-8"?>"#);
    let _ = write!(x.out, r#"<{action}Response xmlns="{EC2_NS}">"#);
    x.leaf("requestId", request_id);
    x.out.push_str(body);
    let _ = write!(x.out, "</{action}Response>");
    x.finish()
}

/// Auto Scaling's error: `<ErrorResponse><Error><Type>Sender|Receiver`.
pub(super) fn autoscaling_error(
    sender: bool,
    code: &str,
    message: &str,
    request_id: &str,
) -> String {
    query_error(AUTOSCALING_NS, sender, code, message, request_id)
}

/// CloudWatch's error: Auto Scaling's envelope in CloudWatch's namespace.
pub(super) fn cloudwatch_error(
    sender: bool,
    code: &str,
    message: &str,
    request_id: &str,
) -> String {
    query_error(CLOUDWATCH_NS, sender, code, message, request_id)
}

fn query_error(ns: &str, sender: bool, code: &str, message: &str, request_id: &str) -> String {
    let mut x = Xml::new();
    x.out.push_str(r#"<?xml version="1.0" encoding="UTF-8"?>"#);
    let _ = write!(x.out, r#"<ErrorResponse xmlns="{ns}">"#);
    x.open("Error")
        .leaf("Type", if sender { "Sender" } else { "Receiver" })
        .leaf("Code", code)
        .leaf("Message", message)
        .close("Error")
        .leaf("RequestId", request_id)
        .close("ErrorResponse");
    x.finish()
}

/// EC2's error: `<Response><Errors><Error>` and `RequestID` (capital D).
pub(super) fn ec2_error(code: &str, message: &str, request_id: &str) -> String {
    let mut x = Xml::new();
    x.out.push_str(r#"<?xml version="1.0" encoding="UTF-8"?>"#);
    x.open("Response")
        .open("Errors")
        .open("Error")
        .leaf("Code", code)
        .leaf("Message", message)
        .close("Error")
        .close("Errors")
        .leaf("RequestID", request_id)
        .close("Response");
    x.finish()
}

/// Unix milliseconds as AWS writes timestamps: `2024-01-01T00:00:00.000Z`.
pub(super) fn timestamp(unix_ms: u64) -> String {
    let secs = unix_ms / 1000;
    let days = i64::try_from(secs / 86_400).unwrap_or(i64::MAX);
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        unix_ms % 1000
    )
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian
/// calendar (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_iso_8601_utc_with_milliseconds() {
        assert_eq!(timestamp(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(timestamp(1_704_067_200_000), "2024-01-01T00:00:00.000Z");
        assert_eq!(timestamp(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(timestamp(1_709_251_199_999), "2024-02-29T23:59:59.999Z");
        assert_eq!(timestamp(4_102_444_800_123), "2100-01-01T00:00:00.123Z");
    }

    #[test]
    fn text_is_escaped_and_absent_members_are_left_out() {
        let mut x = Xml::new();
        x.open("a")
            .leaf("b", "<&>\"'")
            .opt_leaf("c", None::<&str>)
            .opt_leaf("d", Some(3))
            .empty("e")
            .list("f", "member", ["x", "y"])
            .close("a");
        assert_eq!(
            x.finish(),
            "<a><b>&lt;&amp;&gt;&quot;&apos;</b><d>3</d><e/><f><member>x</member><member>y</member></f></a>"
        );
    }

    #[test]
    fn the_two_error_envelopes_differ_as_the_two_services_do() {
        let asg = autoscaling_error(true, "ValidationError", "bad", "r-1");
        assert!(asg.contains(&format!(r#"<ErrorResponse xmlns="{AUTOSCALING_NS}"><Error><Type>Sender</Type><Code>ValidationError</Code><Message>bad</Message></Error><RequestId>r-1</RequestId></ErrorResponse>"#)), "{asg}");
        let ec2 = ec2_error("InvalidInstanceID.NotFound", "gone", "r-2");
        assert!(ec2.ends_with("<Response><Errors><Error><Code>InvalidInstanceID.NotFound</Code><Message>gone</Message></Error></Errors><RequestID>r-2</RequestID></Response>"), "{ec2}");
    }
}
