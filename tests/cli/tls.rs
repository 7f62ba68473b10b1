//! TLS is verified by default: Mesos and Marathon behind a private CA's
//! certificate on loopback are refused, until the CA is trusted
//! with the environment's `ca_bundle` key (or `roller health
//! --ca-bundle`). The server (Python's, from the machine) answers 404 to
//! everything: past the handshake, the error must be about that, not the
//! certificate.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use super::cluster::{Cluster, text};

const SERVER: &str = r#"
import http.server, ssl, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(404)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", "2")
        self.end_headers()
        self.wfile.write(b"{}")
    do_POST = do_GET
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", 0), H)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(sys.argv[1], sys.argv[2])
server.socket = context.wrap_socket(server.socket, server_side=True)
print(server.server_address[1], flush=True)
server.serve_forever()
"#;

/// A private CA (`ca.pem`, the bundle to trust), a certificate it signed
/// for 127.0.0.1, and an HTTPS server using it, stopped when dropped.
struct TlsServer {
    child: Child,
    url: String,
}

fn openssl(dir: &Path, args: &str) {
    let done = Command::new("openssl")
        .args(args.split_whitespace())
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("openssl");
    assert!(done.success(), "openssl {args} failed");
}

impl TlsServer {
    fn start(dir: &Path) -> TlsServer {
        openssl(
            dir,
            "req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=roller-test-CA \
             -keyout ca.key -out ca.pem",
        );
        openssl(
            dir,
            "req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -keyout key.pem -out leaf.csr",
        );
        std::fs::write(
            dir.join("leaf.ext"),
            "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n",
        )
        .unwrap();
        openssl(
            dir,
            "x509 -req -in leaf.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1 \
             -extfile leaf.ext -out cert.pem",
        );
        let (key, cert) = (dir.join("key.pem"), dir.join("cert.pem"));
        let mut child = Command::new("python3")
            .args(["-c", SERVER])
            .arg(&cert)
            .arg(&key)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3");
        let mut port = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut port)
            .unwrap();
        TlsServer {
            child,
            url: format!("https://127.0.0.1:{}", port.trim()),
        }
    }
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn about_the_certificate(output: &str) -> bool {
    let lower = output.to_lowercase();
    lower.contains("certificate") || lower.contains("unknownissuer") || lower.contains("tls")
}

#[test]
fn mesos_and_marathon_behind_a_private_ca_are_refused_until_ca_bundle_trusts_it() {
    let cluster = Cluster::start("demo", "");
    let server = TlsServer::start(cluster.dir.path());
    let cert = cluster.dir.path().join("ca.pem");
    // The group is the simulator's; Mesos and Marathon are the TLS server.
    let env = std::fs::read_to_string(&cluster.env_file).unwrap();
    let env: String = env
        .lines()
        .map(|line| {
            if line.starts_with("mesos =") {
                format!("mesos = [\"{}\"]", server.url)
            } else if line.starts_with("marathon =") {
                format!("marathon = [\"{}\"]", server.url)
            } else {
                line.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let untrusted = cluster.dir.path().join("untrusted.toml");
    std::fs::write(&untrusted, &env).unwrap();
    let trusted = cluster.dir.path().join("trusted.toml");
    std::fs::write(
        &trusted,
        format!("ca_bundle = \"{}\"\n{env}", cert.display()),
    )
    .unwrap();
    let dry_run = |file: &Path| {
        cluster
            .roller(&["run", "--env", file.to_str().unwrap(), "--target", "12"])
            .arg("--dry-run")
            .output()
            .unwrap()
    };

    let refused = dry_run(&untrusted);
    assert_ne!(refused.status.code(), Some(0), "{}", text(&refused));
    assert!(about_the_certificate(&text(&refused)), "{}", text(&refused));

    let accepted = dry_run(&trusted);
    assert_ne!(accepted.status.code(), Some(0), "{}", text(&accepted));
    assert!(
        !about_the_certificate(&text(&accepted)),
        "{}",
        text(&accepted)
    );
    assert!(text(&accepted).contains("404"), "{}", text(&accepted));

    // `roller health` takes the same bundle as a flag.
    let health = |bundle: Option<&Path>| {
        let mut command = cluster.roller(&["health", "--marathon", &server.url]);
        if let Some(bundle) = bundle {
            command.arg("--ca-bundle").arg(bundle);
        }
        command.output().unwrap()
    };
    let refused = health(None);
    assert!(about_the_certificate(&text(&refused)), "{}", text(&refused));
    let accepted = health(Some(&cert));
    assert!(
        !about_the_certificate(&text(&accepted)),
        "{}",
        text(&accepted)
    );
}
