//! `keyscene view`: the interactive player in the browser (issue #15). A small HTTP server
//! (`tiny_http`, one thread, no async runtime) serves a page written for keyscene (compiled in)
//! and the scene's data; every pose the page shows is evaluated here by [`Scene::evaluate`], the
//! evaluation `sample` and `render` use. Routes and shapes: `docs/view.md`.
//!
//! Requests are untrusted: only `GET`/`HEAD` (else 405), a fixed set of routes (else 404),
//! parameters checked (else 400 with a message); no request path reaches the file system —
//! everything served was built from the scene at start ([`data::prepare`]) or is a pose.

use std::net::IpAddr;
use std::path::PathBuf;

use keyscene::scene::Scene;

use crate::{animation_choice, CliError};

pub mod data;

/// The page, compiled into the binary.
const PAGE_HTML: &str = include_str!("page.html");
/// The page's script (WebGL2, written for keyscene).
const PAGE_JS: &str = include_str!("page.js");

/// The longest request target accepted, bytes (longer: 414).
const MAX_URL: usize = 2048;

/// `keyscene view`'s arguments.
#[derive(Debug, clap::Args)]
pub struct ViewArgs {
    /// The scene file.
    file: PathBuf,
    /// The port to listen on; 0 (the default) picks a free one.
    #[arg(long, value_name = "N", default_value_t = 0)]
    port: u16,
    /// Only print the URL; do not try to open it in a browser.
    #[arg(long)]
    no_open: bool,
    /// The animation the page starts on (index; default 0).
    #[arg(long, value_name = "I")]
    animation: Option<usize>,
    /// The animation the page starts on, by name (FBX: the AnimationStack).
    #[arg(long, value_name = "NAME", conflicts_with = "animation")]
    stack: Option<String>,
    /// The address to listen on (default 127.0.0.1, this machine only). Another address makes
    /// the scene readable by anyone who can reach it: unsafe on shared networks.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1")]
    bind: IpAddr,
    /// Reload FILE when it changes (its modification time or size, looked at every 250 ms);
    /// the open page follows by itself.
    #[arg(long)]
    watch: bool,
}

/// How often `--watch` looks at the file's modification time and size.
pub const WATCH_POLL: std::time::Duration = std::time::Duration::from_millis(250);

/// An HTTP answer: status, content type and body.
#[derive(Debug)]
pub struct Reply {
    /// HTTP status code.
    pub status: u16,
    /// The `Content-Type` header.
    pub content_type: &'static str,
    /// The body (sent for GET; HEAD gets the headers only).
    pub body: Vec<u8>,
}

impl Reply {
    fn ok(content_type: &'static str, body: Vec<u8>) -> Reply {
        Reply { status: 200, content_type, body }
    }

    fn text(status: u16, message: impl Into<String>) -> Reply {
        let mut body = message.into().into_bytes();
        body.push(b'\n');
        Reply { status, content_type: "text/plain; charset=utf-8", body }
    }
}

/// The scene being shown, or why it could not be loaded; with everything prepared to serve.
#[derive(Debug)]
pub struct Viewer {
    loaded: Result<(Scene, data::Prepared), String>,
    animation: Option<usize>,
    /// How many times the file was (re)loaded, from 1; `/version` answers it so the page
    /// knows when to fetch the scene again.
    version: u64,
    /// Whether `--watch` is on (`/version` tells the page whether to poll).
    watch: bool,
}

impl Viewer {
    /// Loads `file` and prepares its data; a load error is kept and shown by the page (the
    /// server still starts). `animation`/`stack` choose the animation the page starts on; an
    /// unknown one is an error.
    pub fn new(
        file: &std::path::Path,
        animation: Option<usize>,
        stack: Option<&str>,
    ) -> Result<Viewer, CliError> {
        let name = file.display().to_string();
        let (scene, warnings) = match keyscene::load(file) {
            Ok(x) => x,
            Err(e) => {
                let message = match e {
                    e @ keyscene::Error::Io { .. } => e.to_string(),
                    e => format!("{name}: {e}"),
                };
                eprintln!("keyscene: error: {message}");
                return Ok(Viewer {
                    loaded: Err(message),
                    animation: None,
                    version: 1,
                    watch: false,
                });
            }
        };
        let warnings: Vec<String> = warnings.iter().map(ToString::to_string).collect();
        for w in &warnings {
            eprintln!("keyscene: warning: {name}: {w}");
        }
        let animation =
            scene.choose_animation(&animation_choice(animation, stack.map(String::from)))?;
        let base_dir =
            file.parent()
                .map(|p| if p.as_os_str().is_empty() { std::path::Path::new(".") } else { p });
        let prepared = data::prepare(&scene, &name, &warnings, animation, base_dir);
        Ok(Viewer { loaded: Ok((scene, prepared)), animation, version: 1, watch: false })
    }

    /// Loads `file` again (after it changed) as [`Viewer::new`] does, with the version one
    /// higher. An animation or stack the new file lacks is a load error shown by the page.
    pub fn reload(
        &self,
        file: &std::path::Path,
        animation: Option<usize>,
        stack: Option<&str>,
    ) -> Viewer {
        let version = self.version + 1;
        match Viewer::new(file, animation, stack) {
            Ok(v) => Viewer { version, watch: self.watch, ..v },
            Err(e) => {
                let message = format!("{}: {e}", file.display());
                eprintln!("keyscene: error: {message}");
                Viewer { loaded: Err(message), animation: None, version, watch: self.watch }
            }
        }
    }

    /// The answer to `method url`. Never touches the file system.
    pub fn respond(&self, method: &str, url: &str) -> Reply {
        if method != "GET" && method != "HEAD" {
            return Reply::text(405, format!("{method}: only GET and HEAD are served"));
        }
        if url.len() > MAX_URL {
            return Reply::text(414, format!("the request target is longer than {MAX_URL} bytes"));
        }
        let (path, query) = url.split_once('?').unwrap_or((url, ""));
        match path {
            "/" | "/index.html" => {
                return Reply::ok("text/html; charset=utf-8", PAGE_HTML.as_bytes().to_vec())
            }
            "/page.js" => {
                return Reply::ok("text/javascript; charset=utf-8", PAGE_JS.as_bytes().to_vec())
            }
            "/version" => {
                let body = serde_json::json!({ "version": self.version, "watch": self.watch })
                    .to_string()
                    .into_bytes();
                return Reply::ok("application/json", body);
            }
            _ => {}
        }
        let (scene, prepared) = match &self.loaded {
            Ok((s, p)) => (s, p),
            Err(message) if path == "/scene" => {
                let body = serde_json::json!({ "error": message }).to_string().into_bytes();
                return Reply { status: 500, content_type: "application/json", body };
            }
            Err(message) => {
                return Reply::text(404, format!("{path}: no scene is loaded ({message})"))
            }
        };
        if path == "/scene" {
            return Reply::ok("application/json", prepared.scene_json.clone());
        }
        if path == "/pose" {
            return self.pose(scene, query);
        }
        if let Some(n) = path.strip_prefix("/mesh/") {
            return match index(n, prepared.meshes.len(), "mesh") {
                Ok(i) => Reply::ok("application/octet-stream", prepared.meshes[i].clone()),
                Err(r) => r,
            };
        }
        if let Some(n) = path.strip_prefix("/texture/") {
            return match index(n, prepared.textures.len(), "material") {
                Ok(i) => match &prepared.textures[i] {
                    Some(png) => Reply::ok("image/png", png.clone()),
                    None => Reply::text(404, format!("material {i} has no texture drawn")),
                },
                Err(r) => r,
            };
        }
        Reply::text(
            404,
            format!(
                "{path}: no such page (routes: /, /scene, /version, /mesh/N, /texture/N, /pose)"
            ),
        )
    }

    /// `/pose?animation=A&frame=F`: `animation` an index or `none` (rest pose), default the
    /// starting animation; `frame` a finite number, default the animation's first frame.
    fn pose(&self, scene: &Scene, query: &str) -> Reply {
        let mut animation = self.animation;
        let mut frame = None;
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            match key {
                "animation" if value == "none" => animation = None,
                "animation" => match value.parse::<usize>() {
                    Ok(a) if a < scene.animations.len() => animation = Some(a),
                    _ => {
                        return Reply::text(
                            400,
                            format!(
                                "animation={value}: expected an index below {} or none",
                                scene.animations.len()
                            ),
                        )
                    }
                },
                "frame" => match value.parse::<f64>() {
                    Ok(f) if f.is_finite() => frame = Some(f),
                    _ => {
                        return Reply::text(400, format!("frame={value}: expected a finite number"))
                    }
                },
                _ => {
                    return Reply::text(
                        400,
                        format!("{key}: unknown parameter (expected animation and frame)"),
                    )
                }
            }
        }
        let frame = frame.unwrap_or_else(|| {
            animation.and_then(|a| scene.animations.get(a)).map_or(0.0, |a| a.frame_range.0)
        });
        let doc = match data::pose(scene, animation, frame) {
            Ok(doc) => doc,
            Err(e) => return Reply::text(400, e.to_string()),
        };
        match serde_json::to_vec(&doc) {
            Ok(body) => Reply::ok("application/json", body),
            Err(e) => Reply::text(500, format!("the pose could not be written: {e}")),
        }
    }
}

/// `n` as an index below `len`, else a 400 (not a number) or 404 (no such item).
fn index(n: &str, len: usize, what: &str) -> Result<usize, Reply> {
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) || n.len() > 18 {
        return Err(Reply::text(
            400,
            format!("{}: expected a {what} index (a whole number)", keyscene::quoted(n)),
        ));
    }
    match n.parse::<usize>() {
        Ok(i) if i < len => Ok(i),
        _ => Err(Reply::text(404, format!("{what} {n}: the scene has {len}"))),
    }
}

/// Runs `keyscene view`: serves until the process is stopped (Ctrl-C).
pub fn run(args: ViewArgs) -> Result<(), CliError> {
    let mut viewer = Viewer::new(&args.file, args.animation, args.stack.as_deref())?;
    viewer.watch = args.watch;
    let server = tiny_http::Server::http((args.bind, args.port))
        .map_err(|e| CliError::Msg(format!("cannot listen on {}:{}: {e}", args.bind, args.port)))?;
    let port = server.server_addr().to_ip().map_or(args.port, |a| a.port());
    let host = match args.bind {
        IpAddr::V6(a) => format!("[{a}]"),
        a => a.to_string(),
    };
    let url = format!("http://{host}:{port}/");
    println!("{url}");
    use std::io::Write;
    let _ = std::io::stdout().flush();
    if !args.no_open {
        open_browser(&url);
    }
    let mut watched = args.watch.then(|| Watch::new(&args.file));
    loop {
        let request = match server.recv_timeout(WATCH_POLL) {
            Ok(Some(r)) => Some(r),
            Ok(None) => None,
            // The listener failed (it does not on a working loopback): stop serving.
            Err(e) => return Err(CliError::Msg(format!("the server stopped: {e}"))),
        };
        if let Some(w) = &mut watched {
            if w.changed() {
                eprintln!("keyscene: {} changed, loading it again", args.file.display());
                viewer = viewer.reload(&args.file, args.animation, args.stack.as_deref());
            }
        }
        let Some(request) = request else { continue };
        let reply = viewer.respond(request.method().as_str(), request.url());
        let mut response = tiny_http::Response::from_data(reply.body)
            .with_status_code(reply.status)
            .with_chunked_threshold(usize::MAX);
        for (k, v) in [
            ("Content-Type", reply.content_type),
            ("Cache-Control", "no-store"),
            ("X-Content-Type-Options", "nosniff"),
        ] {
            if let Ok(h) = tiny_http::Header::from_bytes(k.as_bytes(), v.as_bytes()) {
                response.add_header(h);
            }
        }
        if reply.status == 405 {
            if let Ok(h) = tiny_http::Header::from_bytes(&b"Allow"[..], &b"GET, HEAD"[..]) {
                response.add_header(h);
            }
        }
        // A client that went away is no error of the server's.
        let _ = request.respond(response);
    }
}

/// `--watch`: the watched file's modification time and size, polled. A change counts once the
/// file has stayed the same for one more poll, so a file being written is not read half-way.
#[derive(Debug)]
struct Watch {
    file: PathBuf,
    /// What was last loaded.
    loaded: Option<(std::time::SystemTime, u64)>,
    /// A new state seen at the last poll, not yet loaded.
    pending: Option<Option<(std::time::SystemTime, u64)>>,
    last_poll: std::time::Instant,
}

impl Watch {
    fn new(file: &std::path::Path) -> Watch {
        Watch {
            file: file.to_path_buf(),
            loaded: Watch::stamp(file),
            pending: None,
            last_poll: std::time::Instant::now(),
        }
    }

    /// The file's modification time and size, `None` when it cannot be read.
    fn stamp(file: &std::path::Path) -> Option<(std::time::SystemTime, u64)> {
        let m = std::fs::metadata(file).ok()?;
        Some((m.modified().ok()?, m.len()))
    }

    /// Whether the file changed and settled since it was last loaded (at most one look per
    /// [`WATCH_POLL`]).
    fn changed(&mut self) -> bool {
        if self.last_poll.elapsed() < WATCH_POLL {
            return false;
        }
        self.last_poll = std::time::Instant::now();
        let now = Watch::stamp(&self.file);
        if now == self.loaded {
            self.pending = None;
            return false;
        }
        if self.pending == Some(now) {
            self.pending = None;
            self.loaded = now;
            return true;
        }
        self.pending = Some(now);
        false
    }
}

/// Starts the platform's URL opener, ignoring failure (the URL is printed anyway).
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    };
    let _ = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
}
