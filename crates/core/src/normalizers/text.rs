//! The generic text pass: masks specific kinds of noise that change on every call without
//! meaning progress, and nothing else.
//!
//! Masked (each replaced by a fixed placeholder):
//! - a shell's own line counter in its error prefix: `/bin/bash: line 12395: …`,
//!   `sh: 3: …` (only when the prefix names one of the shells of [`crate::tools::SHELLS`]),
//!   and the pid in its report of a process a signal ended (`bash: line 1: 20117
//!   Segmentation fault`);
//! - an interactive prompt's command counter: `In [12]:`, `Out[12]:`;
//! - a background job's pid: a line `[1] 12345`;
//! - elapsed-time figures after a timing word: `Ran 3 tests in 0.012s`, `2 passed in 0.03s`,
//!   `took 0.3 seconds`, `Time elapsed: 0.0062 sec.`, `Wall time: 1.2 seconds`,
//!   `duration_ms: 16190`, and the `real`/`user`/`sys` lines of `time`;
//! - process ids after `pid` or `pgid` (`pid 4242`, `PID: 4242`, `pid=4242`, Gemini CLI's
//!   `Process Group PGID: 4242`);
//! - session ids after `session` when the id contains a digit (`session a1b2c3`);
//! - request ids: after `request id` / `request-id` / `requestId` / `x-request-id`, and
//!   `req_…` tokens;
//! - UUIDs and ISO-8601 date-times (`2026-03-13T19:44:50.935Z`, `2026-03-13 19:44:50`);
//! - the random id of a wrapper marker: `<<<EXTERNAL_UNTRUSTED_CONTENT id="…">>>`;
//! - the clock time that opens a log line: `16:45:25.256 [warning] …`, `[19:47:51] …`,
//!   `08:50:16 INFO …` (a host or a logger stamping each line with the time it was written);
//! - a test runner's timings set off in parentheses or brackets, or after a tab at a line's
//!   end: Go's `--- FAIL: TestParse (0.02s)` and `FAIL\texample.com/parse\t0.123s`, Jest's
//!   `✓ adds (3 ms)`, nextest's `[   0.003s]`;
//! - an HTTP or mail date-time with its zone: `Date: Sun, 06 Dec 2026 23:10:34 GMT`;
//! - the pid opening each line of valgrind and of the sanitizers: `==12345== Invalid read`;
//! - Java's identity hash in an object's default printed form: `com.example.Order@6d06d69c`;
//! - IPython's cell counter in a traceback (`Cell In[12], line 3`) and the file a Jupyter
//!   kernel compiled the cell into (`/tmp/ipykernel_12345/3456789012.py`);
//! - node's pid in its own warnings: `(node:12345) DeprecationWarning: …`;
//! - a mock's address in its printed form: `<MagicMock name='mock.get' id='140234567890'>`;
//! - a web server's or a logger's date-time: Django's `[06/Dec/2026 23:10:34]`, the common
//!   log format's `[06/Dec/2026:23:10:34 +0000]`, syslog's `Dec  6 23:10:34` and glog's
//!   `I1206 23:10:34.123456 140234` opening a line (glog's thread id with it);
//! - java.util.logging's record stamp (`Dec 06, 2026 11:10:34 PM org.…`), Spring Boot's pid
//!   after the level (`INFO 12345 --- [main]`) and uptime (`(process running for 2.789)`),
//!   PHPUnit's run time (`Time: 00:00.123`);
//! - Vitest's `Start at  23:10:34` line and the phase times of its `Duration` line
//!   (`(transform 45ms, setup 0ms, …)`); an elapsed time written as a clock after `elapsed`,
//!   `took` or `duration` (`elapsed: 00:00:02`);
//! - BuildKit's step times: `#5 0.512 Collecting flask`, `#5 DONE 12.3s`;
//! - a Unix time a program prints: seconds with their fraction (`1796609921.8235338`, as
//!   Python's `time.time()`), milliseconds (`1796609921823`, as `Date.now()`), micro- and
//!   nanoseconds (`1796609921823533`, `1796609921823533817`, as `time.time_ns()`);
//! - a test runner's random seed: `Using --randomly-seed=1234567`, `Randomized with seed
//!   31337`, `seed: 42`;
//! - the address in an object's printed form: `<app.Settings object at 0x7f3a2c1b4d90>`,
//!   `<coroutine object main at 0x104c2d1f0>` (a new place in memory on every run);
//! - names and ids made new on every run: npm's log of a failed run
//!   (`_logs/2026-03-13T19_44_50_935Z-debug-0.log`), Python's temporary files and folders
//!   (`/tmp/tmpk3j2l1x9`) and `mktemp`'s (`/tmp/tmp.yVTV0DqUKo`), a compiler driver's
//!   (`/tmp/ccEa2Dct.o`), pytest's session folder (`/tmp/pytest-of-root/pytest-12/`), the
//!   id of a Rust thread that panicked (`thread 'main' (48121) panicked at …`).
//!
//! Not masked, on purpose: plain numbers (line numbers of a listing, counters in progress
//! output, test counts), file paths, dates without a time, `date`'s default output, a
//! clock time anywhere else in a line (a flight's departure time is data), and other hex
//! figures (a debugger's registers and breakpoints).

/// Placeholder for a masked number or token.
const MASK: &str = "<*>";

/// Applies the text pass. Linear in the length of `s`.
pub(crate) fn normalize_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    normalize_text_into(s, &mut out);
    out
}

/// The text pass of `s`, appended to `out` (a reused buffer: no allocation once it is large
/// enough).
pub(crate) fn normalize_text_into(s: &str, out: &mut String) {
    out.reserve(s.len());
    for line in crate::swar::lines_inclusive(s) {
        normalize_line(line, out);
    }
}

/// The text pass of one line (with its newline, if any), appended to `out`.
pub(crate) fn normalize_line_into(line: &str, out: &mut String) {
    normalize_line(line, out);
}

fn normalize_line(line: &str, out: &mut String) {
    let rest = mask_line_prefix(line, out);
    if let Some(rest) = mask_time_line(rest, out) {
        scan_inline(rest, out);
    }
}

/// Shell error prefixes, prompt counters and job pids at the start of a line. Writes the
/// (masked) prefix to `out` and returns the rest of the line.
fn mask_line_prefix<'a>(line: &'a str, out: &mut String) -> &'a str {
    let bytes = line.as_bytes();
    match bytes.first() {
        // valgrind's and the sanitizers' pid: `==12345== Invalid read of size 4`.
        Some(b'=') => {
            if let Some(end) = tool_pid_prefix(bytes) {
                out.push_str("==");
                out.push_str(MASK);
                out.push_str("==");
                return mask_shell_prefix(&line[end..], out);
            }
        }
        // BuildKit's plain progress: `#5 0.512 Collecting flask`, `#5 DONE 12.3s`.
        Some(b'#') => {
            if let Some((start, end)) = buildkit_stamp(bytes) {
                out.push_str(&line[..start]);
                out.push_str(MASK);
                let rest = &line[end..];
                let gap = rest.bytes().take_while(|&b| b == b' ').count();
                out.push_str(&rest[..gap]);
                return mask_shell_prefix(&rest[gap..], out);
            }
        }
        // A log line's leading date-time: syslog's `Dec  6 23:10:34 host …`, glog's `I1206
        // 23:10:34.123456 140234 main.cc:12] …` (its thread id with it).
        Some(b'A'..=b'Z') => {
            if let Some(end) = syslog_stamp(bytes).or_else(|| jul_stamp(bytes)) {
                out.push_str(MASK);
                return mask_shell_prefix(&line[end..], out);
            }
            if let Some(end) = glog_stamp(bytes) {
                out.push_str(&line[..1]);
                out.push_str(MASK);
                return &line[end..];
            }
            if let Some((start, end)) = start_at_clock(bytes) {
                out.push_str(&line[..start]);
                out.push_str(MASK);
                return &line[end..];
            }
        }
        // Vitest's summary: `   Start at  23:10:34`.
        Some(b' ') => {
            if let Some((start, end)) = start_at_clock(bytes) {
                out.push_str(&line[..start]);
                out.push_str(MASK);
                return &line[end..];
            }
        }
        _ => {}
    }
    // A log line's clock time: `16:45:25.256 [warning] …`, `[19:47:51] …`; what follows it
    // may open with one of the prefixes below (`[12:00:01] /bin/bash: line 3: …`).
    if let Some((start, end)) = leading_clock(line.as_bytes()) {
        out.push_str(&line[..start]);
        out.push_str(MASK);
        let rest = &line[end..];
        let gap = rest
            .bytes()
            .take_while(|&b| matches!(b, b']' | b')' | b' ' | b'\t'))
            .count();
        out.push_str(&rest[..gap]);
        return mask_shell_prefix(&rest[gap..], out);
    }
    mask_shell_prefix(line, out)
}

/// How a shell reports a process that a signal ended (bash's and dash's words).
const SIGNAL_REPORTS: &[&str] = &[
    "Segmentation fault",
    "Killed",
    "Aborted",
    "Terminated",
    "Bus error",
    "Floating point exception",
    "Illegal instruction",
    "Trace/breakpoint trap",
    "Hangup",
    "Alarm clock",
    "Broken pipe",
    "Quit",
    "CPU time limit exceeded",
    "File size limit exceeded",
];

/// [`mask_line_prefix`] after the clock time: shell error prefixes (and the pid of a process
/// a signal ended, reported after them), prompt counters and job pids.
fn mask_shell_prefix<'a>(line: &'a str, out: &mut String) -> &'a str {
    // `/bin/bash: line 123: ` or `sh: 3: `: the first word ends with `:` (its space is the
    // line's first, so the head before the colon has none).
    if let Some(colon) = line
        .bytes()
        .position(|b| b == b' ')
        .and_then(|s| s.checked_sub(1))
        .filter(|&c| line.as_bytes().get(c) == Some(&b':'))
    {
        let head = &line[..colon];
        if crate::tools::is_shell(head) {
            let after = &line[colon + 2..];
            let (word, after) = match after.strip_prefix("line ") {
                Some(a) => ("line ", a),
                None => ("", after),
            };
            let digits = after.bytes().take_while(u8::is_ascii_digit).count();
            if digits > 0 && after[digits..].starts_with(':') {
                out.push_str(head);
                out.push_str(": ");
                out.push_str(word);
                out.push_str(MASK);
                let rest = &after[digits..];
                // The shell's report of a process a signal ended, with its pid:
                // `bash: line 1: 20117 Segmentation fault      ./crash`.
                if let Some(job) = rest.strip_prefix(": ") {
                    let pid = job.bytes().take_while(u8::is_ascii_digit).count();
                    let report = job[pid..].trim_start_matches(' ');
                    if pid > 0
                        && report.len() < job.len() - pid
                        && SIGNAL_REPORTS.iter().any(|r| report.starts_with(r))
                    {
                        out.push_str(": ");
                        out.push_str(MASK);
                        return &job[pid..];
                    }
                }
                return rest;
            }
        }
    }
    // `In [12]:` / `Out[12]:`
    for p in ["In [", "Out["] {
        if let Some(after) = line.strip_prefix(p) {
            let digits = after.bytes().take_while(u8::is_ascii_digit).count();
            if digits > 0 && after[digits..].starts_with("]:") {
                out.push_str(p);
                out.push_str(MASK);
                return &after[digits..];
            }
        }
    }
    // `[1] 12345` (a background job's pid)
    if let Some(after) = line.strip_prefix('[') {
        let job = after.bytes().take_while(u8::is_ascii_digit).count();
        if job > 0 {
            if let Some(pid) = after[job..].strip_prefix("] ") {
                let digits = pid.bytes().take_while(u8::is_ascii_digit).count();
                if digits > 0 && pid[digits..].trim().is_empty() {
                    out.push('[');
                    out.push_str(&after[..job]);
                    out.push_str("] ");
                    out.push_str(MASK);
                    return &pid[digits..];
                }
            }
        }
    }
    line
}

/// syslog's date-time opening a line: `Dec  6 23:10:34 `, `Dec 06 23:10:34.123 ` (the month,
/// the day padded to 2, the time of day with seconds, a space). Where it ends.
fn syslog_stamp(bytes: &[u8]) -> Option<usize> {
    if !month_at(bytes, 0) || bytes.get(3) != Some(&b' ') {
        return None;
    }
    let day_ok = match bytes.get(4..6)? {
        [b' ', d] | [b'0'..=b'3', d] => d.is_ascii_digit(),
        _ => false,
    };
    if !day_ok || bytes.get(6) != Some(&b' ') {
        return None;
    }
    let time = time_of_day_at(bytes, 7, 2)?;
    time.seconds?;
    (bytes.get(time.end) == Some(&b' ')).then_some(time.end)
}

/// java.util.logging's date-time opening a record: `Dec 06, 2026 11:10:34 PM ` (the month, the
/// day, the year, the time of day with seconds on a 12-hour clock, `AM` or `PM`, a space).
/// Where it ends.
fn jul_stamp(bytes: &[u8]) -> Option<usize> {
    if !month_at(bytes, 0)
        || bytes.get(3) != Some(&b' ')
        || !digits_at(bytes, 4, 2)
        || bytes.get(6..8)? != b", "
        || !digits_at(bytes, 8, 4)
        || bytes.get(12) != Some(&b' ')
    {
        return None;
    }
    let hour = digit_count(bytes, 13);
    if !(1..=2).contains(&hour) {
        return None;
    }
    let time = time_of_day_at(bytes, 13, hour)?;
    time.seconds?;
    let p = time.end;
    (matches!(bytes.get(p..p + 4)?, b" AM " | b" PM ")).then_some(p + 3)
}

/// glog's prefix (Abseil's and TensorFlow's logs too): `I1206 23:10:34.123456 140234567890 `:
/// the severity, month and day, the time of day with its fraction, the thread id. Where the
/// thread id ends.
fn glog_stamp(bytes: &[u8]) -> Option<usize> {
    if !matches!(bytes.first(), Some(b'I' | b'W' | b'E' | b'F'))
        || !digits_at(bytes, 1, 4)
        || bytes.get(5) != Some(&b' ')
    {
        return None;
    }
    let time = time_of_day_at(bytes, 6, 2)?;
    time.seconds?;
    let mut p = time.end;
    let blanks = bytes.get(p..)?.iter().take_while(|&&b| b == b' ').count();
    p += blanks;
    let thread = digit_count(bytes, p);
    (blanks > 0 && thread > 0 && bytes.get(p + thread) == Some(&b' ')).then_some(p + thread)
}

/// Vitest's `Start at  23:10:34` line (after at most 8 blanks; nothing after the time but
/// blanks): the time's byte range.
fn start_at_clock(bytes: &[u8]) -> Option<(usize, usize)> {
    let lead = bytes.iter().take(8).take_while(|&&b| b == b' ').count();
    let rest = bytes.get(lead..)?.strip_prefix(b"Start at ")?;
    let at = lead + 9 + rest.iter().take_while(|&&b| b == b' ').count();
    let time = time_of_day_at(bytes, at, 2).or_else(|| time_of_day_at(bytes, at, 1))?;
    time.seconds?;
    bytes
        .get(time.end..)?
        .iter()
        .all(u8::is_ascii_whitespace)
        .then_some((at, time.end))
}

/// `==12345==` opening a line of valgrind or of a sanitizer (AddressSanitizer,
/// LeakSanitizer): the checked program's pid, new at every run. Where the prefix ends.
fn tool_pid_prefix(bytes: &[u8]) -> Option<usize> {
    let digits = digit_count(bytes, 2);
    (bytes.starts_with(b"==") && (1..=10).contains(&digits))
        .then_some(2 + digits)
        .filter(|&e| bytes.get(e..e + 2) == Some(b"=="))
        .map(|e| e + 2)
}

/// The time in a line of BuildKit's plain progress output (`docker build --progress=plain`,
/// and what `docker build` prints off a terminal): the seconds since the step started after
/// the step's number, `#5 0.512 Collecting flask` (followed by a space or the line's end),
/// or the step's total time on its last line, `#5 DONE 12.3s`. Its byte range.
fn buildkit_stamp(bytes: &[u8]) -> Option<(usize, usize)> {
    let step = digit_count(bytes, 1);
    if !(1..=5).contains(&step) || bytes.get(1 + step) != Some(&b' ') {
        return None;
    }
    let at = step + 2;
    let line_end = |p: usize| {
        bytes
            .get(p..)
            .unwrap_or_default()
            .iter()
            .all(|b| b.is_ascii_whitespace())
    };
    if let Some(done) = bytes.get(at..).and_then(|r| r.strip_prefix(b"DONE ")) {
        let n = number_len(done, 0);
        let end = at + 5 + n;
        return (n > 0 && bytes.get(end) == Some(&b's') && line_end(end + 1))
            .then_some((at + 5, end + 1));
    }
    let n = number_len(bytes, at);
    let end = at + n;
    let stamp = n > 2 && bytes.get(at..end)?.contains(&b'.');
    (stamp && (bytes.get(end) == Some(&b' ') || line_end(end))).then_some((at, end))
}

/// The clock time that opens a line (after at most 8 blanks and one `[` or `(`):
/// `H:MM:SS` or `HH:MM:SS`, with an optional `.` or `,` fraction, not followed by another
/// `:` group, a `.` or a word byte. Its byte range.
fn leading_clock(bytes: &[u8]) -> Option<(usize, usize)> {
    let mut i = bytes
        .iter()
        .take(8)
        .take_while(|&&b| b == b' ' || b == b'\t')
        .count();
    if matches!(bytes.get(i), Some(b'[' | b'(')) {
        i += 1;
    }
    let start = i;
    let hour_digits = digit_count(bytes, i);
    if !(1..=2).contains(&hour_digits) {
        return None;
    }
    let time = time_of_day_at(bytes, i, hour_digits)?;
    if time.hour > 23 || time.minute > 59 || time.seconds.is_none_or(|s| s > 60) {
        return None;
    }
    let i = time.end;
    match bytes.get(i) {
        Some(&b) if b == b':' || b == b'.' || is_word_byte(b) => None,
        _ => Some((start, i)),
    }
}

/// A time of day read by [`time_of_day_at`].
pub(crate) struct TimeOfDay {
    hour: u32,
    minute: u32,
    pub(crate) seconds: Option<u32>,
    /// Where it ends (after the fraction of its seconds, if any).
    pub(crate) end: usize,
}

/// `H:MM` or `HH:MM` (`hour_digits` digits of hour) at `i`, then `:SS` and a `.` or `,`
/// fraction when present. Digits only: the ranges are the caller's to check.
pub(crate) fn time_of_day_at(bytes: &[u8], i: usize, hour_digits: usize) -> Option<TimeOfDay> {
    time_of_day_sep(bytes, i, hour_digits, b':')
}

/// [`time_of_day_at`] with `sep` between its fields: `:`, or `_` as in a file name
/// (`19_44_50_935`, whose fraction follows a `_` too).
fn time_of_day_sep(bytes: &[u8], i: usize, hour_digits: usize, sep: u8) -> Option<TimeOfDay> {
    let number = |at: usize, n: usize| -> Option<u32> {
        digits_at(bytes, at, n).then(|| {
            bytes[at..at + n]
                .iter()
                .fold(0, |v, d| v * 10 + u32::from(d - b'0'))
        })
    };
    let hour = number(i, hour_digits)?;
    let mut p = i + hour_digits;
    if bytes.get(p) != Some(&sep) {
        return None;
    }
    let minute = number(p + 1, 2)?;
    p += 3;
    let seconds = (bytes.get(p) == Some(&sep))
        .then(|| number(p + 1, 2))
        .flatten();
    if seconds.is_some() {
        p += 3;
        let fraction = |b: u8| {
            if sep == b':' {
                b == b'.' || b == b','
            } else {
                b == sep
            }
        };
        if bytes.get(p).is_some_and(|&b| fraction(b))
            && bytes.get(p + 1).is_some_and(u8::is_ascii_digit)
        {
            p += 1;
            while bytes.get(p).is_some_and(u8::is_ascii_digit) {
                p += 1;
            }
        }
    }
    Some(TimeOfDay {
        hour,
        minute,
        seconds,
        end: p,
    })
}

/// `real\t0m1.234s` style lines of the `time` builtin: masks the whole figure. Returns
/// `None` when the line was fully handled.
fn mask_time_line<'a>(line: &'a str, out: &mut String) -> Option<&'a str> {
    // Most lines start with none of the three words' first letters.
    if !matches!(line.as_bytes().first(), Some(b'r' | b'u' | b's')) {
        return Some(line);
    }
    mask_time_words(line, out)
}

/// [`mask_time_line`] without its first-letter test: each of the three words is tried.
fn mask_time_words<'a>(line: &'a str, out: &mut String) -> Option<&'a str> {
    for w in ["real", "user", "sys"] {
        if let Some(after) = line.strip_prefix(w) {
            let ws = after
                .bytes()
                .take_while(|b| *b == b' ' || *b == b'\t')
                .count();
            let fig = &after[ws..];
            let body = fig.trim_end();
            if ws > 0
                && !body.is_empty()
                && body.ends_with('s')
                && body
                    .bytes()
                    .all(|b| b.is_ascii_digit() || matches!(b, b'm' | b's' | b'.' | b','))
            {
                out.push_str(w);
                out.push_str(&after[..ws]);
                out.push_str(MASK);
                out.push_str(&fig[body.len()..]);
                return None;
            }
        }
    }
    Some(line)
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// What a byte is to [`scan_inline`]: nothing starts at it, a word byte ([`is_word_byte`]),
/// or `<` (a wrapper marker may start there).
const BORING: u8 = 0;
const WORD: u8 = 1;
const ANGLE: u8 = 2;

static KIND: [u8; 256] = {
    let mut t = [BORING; 256];
    let mut b = 0;
    while b < 128 {
        let c = b as u8;
        if c.is_ascii_alphanumeric() || c == b'_' {
            t[b] = WORD;
        } else if c == b'<' {
            t[b] = ANGLE;
        }
        b += 1;
    }
    t
};

/// Scans one line left to right; at each word start tries the inline patterns. A word
/// whose start matched none is stepped over whole: no byte inside it is a word start or `<`.
fn scan_inline(line: &str, out: &mut String) {
    let bytes = line.as_bytes();
    let mut i = 0;
    let mut copied = 0;
    while let Some(&b) = bytes.get(i) {
        let hit = match KIND[usize::from(b)] {
            BORING => {
                i += 1;
                while bytes
                    .get(i)
                    .is_some_and(|&c| KIND[usize::from(c)] == BORING)
                {
                    i += 1;
                }
                continue;
            }
            ANGLE => wrapper_marker(line, i),
            _ => {
                let mut end = i + 1;
                while bytes
                    .get(end)
                    .is_some_and(|&c| KIND[usize::from(c)] == WORD)
                {
                    end += 1;
                }
                let run = end - i;
                let at_word_start = i == 0 || !bytes.get(i - 1).is_some_and(|&p| is_word_byte(p));
                let hit = if at_word_start && b.is_ascii_alphanumeric() {
                    word_hit(line, i, run)
                } else {
                    None
                };
                if hit.is_none() {
                    i += run;
                    continue;
                }
                hit
            }
        };
        match hit {
            Some((keep_end, mask_end)) => {
                out.push_str(&line[copied..keep_end]);
                out.push_str(MASK);
                copied = mask_end;
                i = mask_end.max(i + 1);
            }
            None => i += 1,
        }
    }
    out.push_str(&line[copied..]);
}

/// The inline patterns that start at the word start `i`, whose word bytes run `run` long: a
/// uuid's first group is 8 of them (a `-` follows), a date's year 4, a `req_` token at least
/// 14; only a keyword needs reading to tell.
fn word_hit(line: &str, i: usize, run: usize) -> Hit {
    let bytes = line.as_bytes();
    let first = *bytes.get(i)?;
    if i > 0 && bytes[i - 1] == b'@' {
        if let Some(hit) = identity_hash_at(bytes, i, run) {
            return Some(hit);
        }
    }
    // A uuid's first group and a date's year are followed by `-`; a keyword is a word of its
    // own, or with `-` parts (`x-request-id`).
    let hit = if bytes.get(i + run) == Some(&b'-') {
        match run {
            8 => uuid_at(bytes, i),
            4 => iso_datetime_at(bytes, i),
            11 if first == b't' => temp_name_at(bytes, i),
            6 if first == b'p' => pytest_session_at(bytes, i),
            _ => None,
        }
        .or_else(|| keyword_at(line, i))
    } else if first.is_ascii_digit() {
        let address = if first == b'0' && (8..=18).contains(&run) {
            repr_address_at(bytes, i, run)
        } else {
            None
        };
        address
            .or_else(|| epoch_at(bytes, i, run))
            .or_else(|| set_off_duration_at(bytes, i))
            .or_else(|| thread_id_at(bytes, i, run))
            .or_else(|| node_pid_at(bytes, i, run))
            .or_else(|| cell_counter_at(bytes, i, run))
            .or_else(|| spring_at(bytes, i, run))
            .or_else(|| {
                if run == 2 {
                    slash_datetime_at(bytes, i)
                } else {
                    None
                }
            })
            .or_else(|| listed_duration_at(bytes, i))
    } else if first == b'i' && run == 2 && bytes.get(i + 2) == Some(&b'=') {
        mock_id_at(bytes, i).or_else(|| keyword_at(line, i))
    } else if first == b't' && run == 11 {
        temp_name_at(bytes, i)
    } else if first == b't' && run == 3 && bytes.get(i + 3) == Some(&b'.') {
        mktemp_name_at(bytes, i)
    } else if first == b'c' && run == 8 && bytes.get(i + 8) == Some(&b'.') {
        compiler_temp_at(bytes, i)
    } else if first == b'i' && run > 10 {
        ipykernel_at(bytes, i)
    } else if run == 3 && bytes.get(i + 3) == Some(&b',') {
        rfc_datetime_at(bytes, i)
    } else if maybe_keyword(first, run) {
        keyword_at(line, i)
    } else {
        None
    };
    if hit.is_none() && run >= 14 {
        return req_token_at(bytes, i);
    }
    hit
}

/// A match: bytes `[start, keep_end)` are kept, `[keep_end, mask_end)` are replaced.
type Hit = Option<(usize, usize)>;

fn hex_run(bytes: &[u8], i: usize, n: usize) -> bool {
    bytes
        .get(i..i + n)
        .is_some_and(|s| s.iter().all(u8::is_ascii_hexdigit))
}

fn uuid_at(bytes: &[u8], i: usize) -> Hit {
    let groups = [8usize, 4, 4, 4, 12];
    let mut p = i;
    for (k, n) in groups.iter().enumerate() {
        if !hex_run(bytes, p, *n) {
            return None;
        }
        p += n;
        if k < 4 {
            if bytes.get(p) != Some(&b'-') {
                return None;
            }
            p += 1;
        }
    }
    if bytes.get(p).is_some_and(|b| is_word_byte(*b)) {
        return None;
    }
    Some((i, p))
}

/// How many ASCII digits stand at `p` (none at or past the end).
#[inline]
fn digit_count(bytes: &[u8], p: usize) -> usize {
    bytes
        .get(p..)
        .map_or(0, |s| s.iter().take_while(|b| b.is_ascii_digit()).count())
}

/// Whether a month's abbreviation (`Jan` … `Dec`) stands at `p`.
fn month_at(bytes: &[u8], p: usize) -> bool {
    bytes
        .get(p..p + 3)
        .is_some_and(|m| MONTHS.iter().any(|x| x[..] == *m))
}

fn digits_at(bytes: &[u8], i: usize, n: usize) -> bool {
    bytes
        .get(i..i + n)
        .is_some_and(|s| s.iter().all(u8::is_ascii_digit))
}

/// `YYYY-MM-DDTHH:MM[:SS[.frac]][Z|±HH[:]MM]`, or with a space instead of `T` when seconds
/// are present.
pub(crate) fn iso_datetime_at(bytes: &[u8], i: usize) -> Hit {
    if !(digits_at(bytes, i, 4)
        && bytes.get(i + 4) == Some(&b'-')
        && digits_at(bytes, i + 5, 2)
        && bytes.get(i + 7) == Some(&b'-')
        && digits_at(bytes, i + 8, 2))
    {
        return None;
    }
    let sep = *bytes.get(i + 10)?;
    if !(sep == b'T' || sep == b' ') || !digits_at(bytes, i + 11, 2) {
        return None;
    }
    // In a file name (npm's log of every failed run, `…/_logs/2026-03-13T19_44_50_935Z-…`),
    // `_` stands for `:` and the seconds are there.
    let field = if sep == b'T' && bytes.get(i + 13) == Some(&b'_') {
        b'_'
    } else {
        b':'
    };
    let time = time_of_day_sep(bytes, i + 11, 2, field)?;
    if time.seconds.is_none() && (sep == b' ' || field == b'_') {
        return None;
    }
    let mut p = time.end;
    match bytes.get(p) {
        Some(b'Z') => p += 1,
        Some(b'+') | Some(b'-') if digits_at(bytes, p + 1, 2) => {
            p += 3;
            if bytes.get(p) == Some(&b':') && digits_at(bytes, p + 1, 2) {
                p += 3;
            } else if digits_at(bytes, p, 2) {
                p += 2;
            }
        }
        _ => {}
    }
    if bytes.get(p).is_some_and(|b| b.is_ascii_alphanumeric()) {
        return None;
    }
    Some((i, p))
}

/// The identity hash in Java's default printed form of an object, `com.example.Foo@6d06d69c`,
/// `[I@1b6d3586`: after `@` (a class name's last character or `;` before it), 5 to 8
/// lower-case hex digits with at least one digit (the `run` word bytes at `i`), and no `.` or
/// `-` after them (an e-mail's domain, a uuid). A new object on every run has a new hash.
fn identity_hash_at(bytes: &[u8], i: usize, run: usize) -> Hit {
    let before = *bytes.get(i.checked_sub(2)?)?;
    let hex = bytes.get(i..i + run)?;
    let ok = bytes.get(i - 1) == Some(&b'@')
        && (is_word_byte(before) || before == b';')
        && (5..=8).contains(&run)
        && hex
            .iter()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
        && hex.iter().any(u8::is_ascii_digit)
        && !matches!(bytes.get(i + run), Some(b'.' | b'-'));
    ok.then_some((i, i + run))
}

/// The pid in node's own warnings: `(node:12345) [DEP0040] DeprecationWarning: …`. The
/// `run` digits at `i`.
fn node_pid_at(bytes: &[u8], i: usize, run: usize) -> Hit {
    let pid = bytes.get(i..i + run)?;
    (i >= 6
        && bytes.get(i - 6..i) == Some(b"(node:")
        && pid.iter().all(u8::is_ascii_digit)
        && bytes.get(i + run) == Some(&b')'))
    .then_some((i, i + run))
}

/// The words a logger writes for a record's level.
const LOG_LEVELS: [&[u8]; 6] = [b"TRACE", b"DEBUG", b"INFO", b"WARN", b"ERROR", b"FATAL"];

/// Spring Boot's log: the pid after the level, `  INFO 12345 --- [main] …`, and the JVM's
/// uptime when the application started, `Started App in 2.3 seconds (process running for
/// 2.789)` (Spring Boot 2 writes `JVM running for`). The `run` digits at `i` start either.
fn spring_at(bytes: &[u8], i: usize, run: usize) -> Hit {
    let head = bytes.get(..i)?;
    if head.ends_with(b" running for ") {
        let n = number_len(bytes, i);
        return (bytes.get(i + n) == Some(&b')')).then_some((i, i + n));
    }
    if bytes.get(i + run..i + run + 5) != Some(b" --- ") {
        return None;
    }
    let before = head.iter().rev().take_while(|&&b| b == b' ').count();
    let word = head.get(..head.len() - before)?;
    (before > 0 && LOG_LEVELS.iter().any(|l| word.ends_with(l))).then_some((i, i + run))
}

/// IPython's cell counter in a traceback: `Cell In[12], line 3` (IPython 8), `Input In [12],
/// in <cell line: 1>()` (IPython 7). The `run` digits at `i`. Running the same cell again
/// runs it under the next number.
fn cell_counter_at(bytes: &[u8], i: usize, run: usize) -> Hit {
    let head = bytes.get(..i)?;
    (bytes.get(i + run) == Some(&b']')
        && (head.ends_with(b"Cell In[") || head.ends_with(b"Input In [")))
    .then_some((i, i + run))
}

/// The file a Jupyter kernel compiled a cell into: `/tmp/ipykernel_12345/3456789012.py` (the
/// kernel's pid, and a hash of the cell with its counter). Masks `12345/3456789012`.
fn ipykernel_at(bytes: &[u8], i: usize) -> Hit {
    let rest = bytes.get(i..)?.strip_prefix(b"ipykernel_")?;
    let pid = digit_count(rest, 0);
    let name = digit_count(rest, pid + 1);
    (pid > 0 && rest.get(pid) == Some(&b'/') && name > 0)
        .then_some((i + 10, i + 10 + pid + 1 + name))
}

/// The address of a mock in its printed form, `<MagicMock name='mock.get'
/// id='140234567890'>`: the digits of `id='…'>` (6 or more), which are where the mock
/// landed in memory.
fn mock_id_at(bytes: &[u8], i: usize) -> Hit {
    if bytes.get(i..i + 4)? != b"id='" {
        return None;
    }
    let n = digit_count(bytes, i + 4);
    (n >= 6 && bytes.get(i + 4 + n..i + 6 + n) == Some(b"'>")).then_some((i + 4, i + 4 + n))
}

/// A web server's log date-time: Django's `[06/Dec/2026 23:10:34]`, the common log format's
/// `[06/Dec/2026:23:10:34 +0000]`: the day (2 digits), the month, the year, `:` or a space,
/// the time of day with seconds, and the zone when one follows.
fn slash_datetime_at(bytes: &[u8], i: usize) -> Hit {
    if !(digits_at(bytes, i, 2) && bytes.get(i + 2) == Some(&b'/')) {
        return None;
    }
    if !month_at(bytes, i + 3)
        || bytes.get(i + 6) != Some(&b'/')
        || !digits_at(bytes, i + 7, 4)
        || !matches!(bytes.get(i + 11), Some(b':' | b' '))
    {
        return None;
    }
    let time = time_of_day_at(bytes, i + 12, 2)?;
    time.seconds?;
    let mut p = time.end;
    if bytes.get(p) == Some(&b' ')
        && matches!(bytes.get(p + 1), Some(b'+' | b'-'))
        && digits_at(bytes, p + 2, 4)
    {
        p += 6;
    }
    if bytes.get(p).is_some_and(|b| is_word_byte(*b)) {
        return None;
    }
    Some((i, p))
}

/// Units of a duration that is an item of a list ([`listed_duration_at`]).
const LIST_UNITS: &[&str] = &["ms", "s", "us", "µs", "ns"];

/// A duration that is an item of a list set off in parentheses, after the item's name:
/// Vitest's `Duration 1.23s (transform 45ms, setup 0ms, collect 120ms)`. A unit of
/// [`LIST_UNITS`], then `,` or `)`; before it one word of letters and a space, which follows
/// `(` or `, `.
fn listed_duration_at(bytes: &[u8], i: usize) -> Hit {
    // What comes before first: most numbers are not an item of such a list.
    let space = i.checked_sub(1)?;
    if bytes.get(space) != Some(&b' ') {
        return None;
    }
    let word = bytes
        .get(..space)?
        .iter()
        .rev()
        .take_while(|b| b.is_ascii_alphabetic())
        .count();
    let q = space - word;
    let opened = (q >= 1 && bytes.get(q - 1) == Some(&b'('))
        || (q >= 2 && bytes.get(q - 2..q) == Some(b", "));
    if word == 0 || !opened {
        return None;
    }
    let end = duration_at(bytes, i)?;
    if !matches!(bytes.get(end), Some(b',' | b')')) {
        return None;
    }
    let unit_start = i + number_len(bytes, i);
    let unit = bytes.get(unit_start..end)?;
    let unit = unit.strip_prefix(b" ").unwrap_or(unit);
    LIST_UNITS
        .iter()
        .any(|u| u.as_bytes() == unit)
        .then_some((i, end))
}

/// The weekdays and months of an RFC 1123 / RFC 2822 date-time, as written there.
const WEEKDAYS: [&[u8; 3]; 7] = [b"Mon", b"Tue", b"Wed", b"Thu", b"Fri", b"Sat", b"Sun"];
const MONTHS: [&[u8; 3]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];

/// An HTTP or mail date-time (RFC 1123, RFC 2822): `Sun, 06 Dec 2026 23:10:34 GMT`, `Mon, 7
/// Dec 2026 09:01:02 +0000`: a weekday, `, `, the day (1 or 2 digits), the month, the year,
/// the time of day with seconds, and the zone when one follows (`GMT`, `UTC`, `UT`, `Z`,
/// `±hhmm`). A server stamps every answer with the moment it was sent.
fn rfc_datetime_at(bytes: &[u8], i: usize) -> Hit {
    let day_name = bytes.get(i..i + 3)?;
    if !WEEKDAYS.iter().any(|d| d[..] == *day_name) || bytes.get(i + 3..i + 5)? != b", " {
        return None;
    }
    let mut p = i + 5;
    let day = digit_count(bytes, p);
    if !(1..=2).contains(&day) || bytes.get(p + day) != Some(&b' ') {
        return None;
    }
    p += day + 1;
    if !month_at(bytes, p) || bytes.get(p + 3) != Some(&b' ') {
        return None;
    }
    p += 4;
    if !digits_at(bytes, p, 4) || bytes.get(p + 4) != Some(&b' ') {
        return None;
    }
    let time = time_of_day_at(bytes, p + 5, 2)?;
    time.seconds?;
    p = time.end;
    if bytes.get(p) == Some(&b' ') {
        let zone = bytes.get(p + 1..).unwrap_or_default();
        let len = if zone.starts_with(b"GMT") || zone.starts_with(b"UTC") {
            3
        } else if zone.starts_with(b"UT") {
            2
        } else if zone.starts_with(b"Z") {
            1
        } else if matches!(zone.first(), Some(b'+' | b'-')) && digits_at(zone, 1, 4) {
            5
        } else {
            0
        };
        if len > 0 && !zone.get(len).is_some_and(|b| is_word_byte(*b)) {
            p += 1 + len;
        }
    }
    if bytes.get(p).is_some_and(|b| is_word_byte(*b)) {
        return None;
    }
    Some((i, p))
}

/// The address in an object's printed form, `<Foo object at 0x7f3a2c1b4d90>`, `<function
/// main at 0x104c2d1f0>`: ` at ` before it, `0x` and 6 to 16 hex digits (the `run` word bytes
/// at `i`), `>` after it. Where a program's objects land in memory changes on every run;
/// what the object is does not. Other hex figures (a register, a constant) are kept.
fn repr_address_at(bytes: &[u8], i: usize, run: usize) -> Hit {
    let after = i + run;
    (i >= 4
        && bytes.get(i - 4..i) == Some(b" at ")
        && bytes.get(i + 1) == Some(&b'x')
        && hex_run(bytes, i + 2, run - 2)
        && bytes.get(after) == Some(&b'>'))
    .then_some((i, after))
}

/// A duration set off as a test runner sets off the time a test or a package took: alone
/// in parentheses or brackets (`--- FAIL: TestParse (0.02s)`, Jest's `✓ adds (3 ms)`,
/// nextest's `[   0.003s]`), or after a tab at the end of the line (`FAIL\texample.com/parse\t0.123s`).
/// Its byte range; `i` starts a word of digits.
fn set_off_duration_at(bytes: &[u8], i: usize) -> Hit {
    // What comes before first: most words of digits are in neither place.
    let before = bytes.get(..i)?.iter().rev().find(|&&b| b != b' ');
    let after_tab = i > 0 && bytes.get(i - 1) == Some(&b'\t');
    if !(matches!(before, Some(b'(' | b'[')) || after_tab) {
        return None;
    }
    let end = duration_at(bytes, i)?;
    let after = bytes.get(end..)?.iter().find(|&&b| b != b' ');
    let enclosed = matches!(
        (before, after),
        (Some(b'('), Some(b')')) | (Some(b'['), Some(b']'))
    );
    let tabbed = after_tab && matches!(bytes.get(end..), Some(b"" | b"\n" | b"\r\n"));
    (enclosed || tabbed).then_some((i, end))
}

/// The random part of a name Python's `tempfile` made (`/tmp/tmpk3j2l1x9/out.bin`,
/// `/tmp/tmpab12_d34.py`): after a `/`, `tmp` and 8 of `a-z0-9_`, then no word byte. New on
/// every run of the same program. Its byte range (the 8 characters); `i` starts an 11-byte
/// word.
fn temp_name_at(bytes: &[u8], i: usize) -> Hit {
    let name = bytes.get(i..i + 11)?;
    (i > 0
        && bytes.get(i - 1) == Some(&b'/')
        && name.starts_with(b"tmp")
        && name[3..]
            .iter()
            .all(|&b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        && !bytes.get(i + 11).is_some_and(|&b| is_word_byte(b)))
    .then_some((i + 3, i + 11))
}

/// The random part of a name `mktemp` made with its default template, after a `/`:
/// `/tmp/tmp.yVTV0DqUKo` (`tmp.` and ten letters or digits). `i` starts the word `tmp`.
fn mktemp_name_at(bytes: &[u8], i: usize) -> Hit {
    let name = bytes.get(i + 4..i + 14)?;
    (i > 0
        && bytes.get(i - 1) == Some(&b'/')
        && bytes.get(i..i + 4) == Some(b"tmp.")
        && name.iter().all(u8::is_ascii_alphanumeric)
        && !bytes.get(i + 14).is_some_and(|&b| is_word_byte(b)))
    .then_some((i + 4, i + 14))
}

/// The random part of a compiler driver's temporary file, after a `/`: gcc's and clang's
/// `/tmp/ccEa2Dct.o` in a link error (`cc`, six letters or digits, a `.` and an extension of
/// one to six lower-case letters). `i` starts the word `cc…`.
fn compiler_temp_at(bytes: &[u8], i: usize) -> Hit {
    let ext = bytes
        .get(i + 9..)?
        .iter()
        .take_while(|b| b.is_ascii_lowercase())
        .count();
    (i > 0
        && bytes.get(i - 1) == Some(&b'/')
        && bytes.get(i..i + 2) == Some(b"cc")
        && bytes
            .get(i + 2..i + 8)?
            .iter()
            .all(u8::is_ascii_alphanumeric)
        && bytes.get(i + 8) == Some(&b'.')
        && (1..=6).contains(&ext)
        && !bytes.get(i + 9 + ext).is_some_and(|&b| is_word_byte(b)))
    .then_some((i + 2, i + 8))
}

/// A Unix time printed by a program, new on every run: seconds with their fraction, as
/// Python's `time.time()` prints them (`1796609921.8235338`: ten digits from 1000000000 to
/// 2147483647, a `.` and one to nine digits), or milliseconds, as `Date.now()` and
/// `System.currentTimeMillis()` print them (thirteen digits from 1000000000000 to
/// 2199999999999; not followed by `.` or `-`), or micro- and nanoseconds, as Go's
/// `UnixMicro()` and Python's `time.time_ns()` print them (sixteen and nineteen digits in the
/// same span of years). Not a number of another length, nor ten digits without a fraction
/// (an id or a count may be). `i` starts the `run` digits.
fn epoch_at(bytes: &[u8], i: usize, run: usize) -> Hit {
    let digits = bytes.get(i..i + run)?;
    if !digits.iter().all(u8::is_ascii_digit) || (i > 0 && bytes[i - 1] == b'.') {
        return None;
    }
    let value = digits.iter().fold(0u64, |v, &d| {
        v.saturating_mul(10).saturating_add(u64::from(d - b'0'))
    });
    match run {
        10 if (1_000_000_000..=2_147_483_647).contains(&value)
            && bytes.get(i + 10) == Some(&b'.') =>
        {
            let fraction = digit_count(bytes, i + 11);
            ((1..=9).contains(&fraction)
                && !bytes
                    .get(i + 11 + fraction)
                    .is_some_and(|&b| is_word_byte(b)))
            .then_some((i, i + 11 + fraction))
        }
        // Milli-, micro- and nanoseconds: 10^(run-1) up to 2.2 × 10^(run-1).
        13 | 16 | 19 => {
            let low = 10u64.pow(run as u32 - 1);
            ((low..low / 10 * 22).contains(&value)
                && !matches!(bytes.get(i + run), Some(b'.' | b'-')))
            .then_some((i, i + run))
        }
        _ => None,
    }
}

/// The number of pytest's session folder in a test's temporary path
/// (`/tmp/pytest-of-root/pytest-12/test_export0/out.bin`): one more on every run. After a
/// `/`, `pytest-` and digits, then `/`. Its byte range (the digits); `i` starts the word
/// `pytest`.
fn pytest_session_at(bytes: &[u8], i: usize) -> Hit {
    let start = i + 7;
    let n = digit_count(bytes, start);
    (i > 0
        && bytes.get(i - 1) == Some(&b'/')
        && bytes.get(i..start) == Some(b"pytest-")
        && n > 0
        && bytes.get(start + n) == Some(&b'/'))
    .then_some((start, start + n))
}

/// The id Rust gives a panicking thread, new on every run: `thread 'main' (12345) panicked
/// at src/main.rs:4:5:`. `i` starts the `run` digits.
fn thread_id_at(bytes: &[u8], i: usize, run: usize) -> Hit {
    (i >= 3
        && bytes.get(i - 3..i) == Some(b"' (")
        && bytes
            .get(i..i + run)
            .is_some_and(|d| d.iter().all(u8::is_ascii_digit))
        && bytes.get(i + run..i + run + 10) == Some(b") panicked"))
    .then_some((i, i + run))
}

/// `req_` followed by at least 10 letters or digits.
fn req_token_at(bytes: &[u8], i: usize) -> Hit {
    if bytes.get(i..i + 4) != Some(b"req_") {
        return None;
    }
    let n = bytes[i + 4..]
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric())
        .count();
    if n < 10 || bytes.get(i + 4 + n).is_some_and(|b| is_word_byte(*b)) {
        return None;
    }
    Some((i, i + 4 + n))
}

/// `<<<SOME_MARKER id="…">>>`: masks the id value.
/// The longest `<<<NAME id="…"` header a wrapper marker is looked for in.
const MAX_MARKER_HEADER: usize = 256;

fn wrapper_marker(line: &str, i: usize) -> Hit {
    let rest = line.get(i..)?;
    let body = rest.strip_prefix("<<<")?;
    let name_len = body
        .bytes()
        .take_while(|b| b.is_ascii_uppercase() || *b == b'_')
        .count();
    if name_len == 0 {
        return None;
    }
    // A marker's header is short: looking for its end only within the next 256 bytes keeps a
    // line full of unclosed `<<<NAME` linear rather than quadratic.
    let mut head = body.len().min(MAX_MARKER_HEADER);
    while !body.is_char_boundary(head) {
        head -= 1;
    }
    let close = body[..head].find(">>>")?;
    let inner = &body[..close];
    let id = inner.find("id=\"")?;
    let start = id + 4;
    let end = start + inner[start..].find('"')?;
    if end == start {
        return None;
    }
    let base = i + 3;
    Some((base + start, base + end))
}

/// Words after which an elapsed time follows.
const TIME_WORDS: &[&str] = &["in", "took", "elapsed", "time", "duration", "after", "wall"];
/// Keys whose integer value is a duration (the unit is in the key).
const DURATION_KEYS: &[&str] = &[
    "duration_ms",
    "durationms",
    "elapsed_ms",
    "elapsedms",
    "took_ms",
    "tookms",
    "time_ms",
];
/// Time units accepted after a number.
const UNITS: &[&str] = &[
    "seconds",
    "second",
    "secs",
    "sec",
    "s",
    "ms",
    "milliseconds",
    "us",
    "µs",
    "ns",
    "minutes",
    "min",
    "mins",
    "m",
];

/// The words [`keyword_at`] reads a value after, besides [`TIME_WORDS`] and
/// [`DURATION_KEYS`].
const ID_WORDS: &[&str] = &[
    "pid",
    "pgid",
    "session",
    "sessionid",
    "session_id",
    "session-id",
    "requestid",
    "request_id",
    "request-id",
    "x-request-id",
    "request",
    "seed",
    "randomly-seed",
];

/// Per lower-case first letter, the lengths (bit `n`) of the keywords that start with it.
const KEYWORD_LENGTHS: [u32; 26] = {
    let mut t = [0u32; 26];
    let lists: [&[&str]; 3] = [TIME_WORDS, DURATION_KEYS, ID_WORDS];
    let mut l = 0;
    while l < lists.len() {
        let mut k = 0;
        while k < lists[l].len() {
            let w = lists[l][k].as_bytes();
            t[(w[0] - b'a') as usize] |= 1 << w.len();
            k += 1;
        }
        l += 1;
    }
    t
};

/// Whether a word opening with `first` and `len` bytes long can be a keyword.
fn maybe_keyword(first: u8, len: usize) -> bool {
    let c = first.to_ascii_lowercase();
    c.is_ascii_lowercase() && len < 32 && KEYWORD_LENGTHS[usize::from(c - b'a')] & (1 << len) != 0
}

/// Keyword-led patterns: a keyword, separators, then the masked value.
fn keyword_at(line: &str, i: usize) -> Hit {
    let bytes = line.as_bytes();
    // Every keyword starts with one of these letters and is at most 16 bytes long: most
    // words are rejected here without any work.
    if !matches!(
        bytes.get(i).map(u8::to_ascii_lowercase),
        Some(b'i' | b't' | b'e' | b'd' | b'a' | b'w' | b'p' | b's' | b'r' | b'x')
    ) {
        return None;
    }
    let word_len = bytes[i..]
        .iter()
        .take_while(|b| is_word_byte(**b) || **b == b'-')
        .count();
    if word_len > 16 {
        return None;
    }
    // Most words have no keyword of their first letter and length (without trailing `-`).
    let trimmed = bytes[i..i + word_len]
        .iter()
        .rposition(|&b| b != b'-')
        .map_or(0, |p| p + 1);
    if !maybe_keyword(bytes[i], trimmed) {
        return None;
    }
    keyword_value_at(line, i, word_len)
}

/// The keyword of [`TIME_WORDS`], [`DURATION_KEYS`] or [`ID_WORDS`] spelt by `word` (lower
/// case), if any.
fn keyword_named(word: &[u8]) -> Option<&'static str> {
    TIME_WORDS
        .iter()
        .chain(DURATION_KEYS)
        .chain(ID_WORDS)
        .find(|k| k.len() == word.len() && k.as_bytes() == word)
        .copied()
}

/// [`keyword_at`] for the word of `word_len` bytes at `i` (letters, digits, `_`, `-`; at
/// most 16), whatever its first letter and length.
fn keyword_value_at(line: &str, i: usize, word_len: usize) -> Hit {
    let bytes = line.as_bytes();
    let mut buf = [0u8; 16];
    for (d, s) in buf.iter_mut().zip(&bytes[i..i + word_len]) {
        *d = s.to_ascii_lowercase();
    }
    // The word without its trailing `-`s, when it is one of the keywords: no other word has
    // a value read after it.
    let lower = buf.get(..word_len)?;
    let kept = lower.iter().rposition(|&b| b != b'-').map_or(0, |p| p + 1);
    let word = keyword_named(lower.get(..kept)?)?;
    keyword_value(line, i, word)
}

/// The value after keyword `word` (lower case, as spelt at `i`, `-`s after it left out);
/// `None` for any other word.
fn keyword_value(line: &str, i: usize, word: &str) -> Hit {
    let bytes = line.as_bytes();
    let after_word = i + word.len();
    let value_start = skip_separators(bytes, after_word);
    if value_start == after_word && !DURATION_KEYS.contains(&word) {
        // a separator is required between a keyword and its value
        return None;
    }
    if TIME_WORDS.contains(&word) {
        return duration_at(bytes, value_start)
            .or_else(|| {
                matches!(word, "elapsed" | "took" | "duration")
                    .then(|| clock_duration_at(bytes, value_start))
                    .flatten()
            })
            .or_else(|| {
                (word == "time")
                    .then(|| minutes_clock_at(bytes, value_start))
                    .flatten()
            })
            .map(|end| (value_start, end));
    }
    if DURATION_KEYS.contains(&word) {
        if value_start == after_word {
            return None;
        }
        let n = number_len(bytes, value_start);
        return (n > 0 && !bytes.get(value_start + n).is_some_and(|b| is_word_byte(*b)))
            .then_some((value_start, value_start + n));
    }
    match word {
        "pid" | "pgid" | "seed" | "randomly-seed" => {
            let n = digit_count(bytes, value_start);
            (n > 0 && !bytes.get(value_start + n).is_some_and(|b| is_word_byte(*b)))
                .then_some((value_start, value_start + n))
        }
        "session" | "sessionid" | "session_id" | "session-id" => {
            id_token_at(line, value_start, word == "session")
        }
        "requestid" | "request_id" | "request-id" | "x-request-id" => {
            id_token_at(line, value_start, false)
        }
        "request" => {
            // `request id: …`
            let rest = line.get(value_start..)?;
            let lower = rest.get(..2)?.to_ascii_lowercase();
            if lower != "id" || rest.as_bytes().get(2).is_some_and(|b| is_word_byte(*b)) {
                return None;
            }
            let v = skip_separators(bytes, value_start + 2);
            if v == value_start + 2 {
                return None;
            }
            id_token_at(line, v, false)
        }
        _ => None,
    }
}

fn skip_separators(bytes: &[u8], mut p: usize) -> usize {
    while bytes
        .get(p)
        .is_some_and(|b| matches!(b, b' ' | b'\t' | b':' | b'=' | b'"' | b'\'' | b'#'))
    {
        p += 1;
    }
    p
}

/// An id token at `p`: letters, digits, `-`, `_`, `.`; at least 4 characters and at least
/// one digit. With `needs_mixed`, a bare number is refused (so `session 2` stays).
fn id_token_at(line: &str, p: usize, needs_mixed: bool) -> Hit {
    let bytes = line.as_bytes();
    let n = bytes
        .get(p..)?
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        .count();
    let token = line.get(p..p + n)?.trim_end_matches('.');
    let n = token.len();
    if n < 4 || !token.bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    if needs_mixed && token.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((p, p + n))
}

/// Length of `\d+(\.\d+)?` at `p`.
fn number_len(bytes: &[u8], p: usize) -> usize {
    let int = digit_count(bytes, p);
    if int == 0 {
        return 0;
    }
    let q = p + int;
    if matches!(bytes.get(q), Some(b'.') | Some(b',')) {
        let frac = digit_count(bytes, q + 1);
        if frac > 0 {
            return int + 1 + frac;
        }
    }
    int
}

/// A duration written as a clock at `p`: `00:00:02`, `0:03:41.5` (seconds required), then
/// no word byte, `:` or `.`. Where it ends.
fn clock_duration_at(bytes: &[u8], p: usize) -> Option<usize> {
    let hours = digit_count(bytes, p);
    if !(1..=2).contains(&hours) {
        return None;
    }
    let time = time_of_day_at(bytes, p, hours)?;
    time.seconds?;
    (!bytes
        .get(time.end)
        .is_some_and(|&b| is_word_byte(b) || b == b':' || b == b'.'))
    .then_some(time.end)
}

/// A duration of minutes and seconds with a fraction at `p`, as PHPUnit writes its run's time
/// (`Time: 00:00.123`): then no word byte, `:` or `.`. Where it ends.
fn minutes_clock_at(bytes: &[u8], p: usize) -> Option<usize> {
    if !(digits_at(bytes, p, 2)
        && bytes.get(p + 2) == Some(&b':')
        && digits_at(bytes, p + 3, 2)
        && bytes.get(p + 5) == Some(&b'.'))
    {
        return None;
    }
    let frac = digit_count(bytes, p + 6);
    let end = p + 6 + frac;
    (frac > 0
        && !bytes
            .get(end)
            .is_some_and(|&b| is_word_byte(b) || b == b':' || b == b'.'))
    .then_some(end)
}

/// A duration at `p`: a number, an optional space, a time unit, then a non-word byte.
/// Returns the end of the unit.
fn duration_at(bytes: &[u8], p: usize) -> Option<usize> {
    let n = number_len(bytes, p);
    if n == 0 {
        return None;
    }
    let mut q = p + n;
    if bytes.get(q) == Some(&b' ') {
        q += 1;
    }
    let rest = bytes.get(q..)?;
    for unit in UNITS {
        let u = unit.as_bytes();
        if rest.len() >= u.len()
            && rest[..u.len()].eq_ignore_ascii_case(u)
            && !rest.get(u.len()).is_some_and(|b| is_word_byte(*b))
        {
            return Some(q + u.len());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::normalize_text as n;

    #[test]
    fn bash_line_counter_is_masked() {
        let a = "/bin/bash: line 11301: cd: fastjson/: No such file or directory";
        let b = "/bin/bash: line 11316: cd: fastjson/: No such file or directory";
        assert_eq!(n(a), n(b));
        assert_eq!(
            n(a),
            "/bin/bash: line <*>: cd: fastjson/: No such file or directory"
        );
        assert_eq!(
            n("/bin/sh: 1: foo: not found"),
            n("/bin/sh: 7: foo: not found")
        );
    }

    #[test]
    fn bash_line_counter_keeps_the_message() {
        assert_ne!(
            n("/bin/bash: line 1: cd: fastjson/: No such file or directory"),
            n("/bin/bash: line 1: cd: fastxml/: No such file or directory")
        );
    }

    #[test]
    fn script_line_numbers_and_listings_are_kept() {
        // A script's own line number is not a shell counter.
        assert_ne!(
            n("./run.sh: line 4: mvn: command not found"),
            n("./run.sh: line 5: mvn: command not found")
        );
        // Line numbers of a file listing are content.
        assert_ne!(
            n("12:    let x = 1;\n13:    let y = 2;\n"),
            n("13:    let x = 1;\n14:    let y = 2;\n")
        );
        assert_ne!(n("     1\tfoo\n"), n("     2\tfoo\n"));
    }

    #[test]
    fn progress_counters_are_kept() {
        assert_ne!(
            n("Downloading: 45% (90/200)"),
            n("Downloading: 50% (100/200)")
        );
        assert_ne!(n("Ran 3 tests in 0.01s"), n("Ran 4 tests in 0.01s"));
        assert_ne!(n("processed 10 items"), n("processed 11 items"));
    }

    #[test]
    fn elapsed_time_footers_are_masked() {
        assert_eq!(
            n("Ran 3 tests in 0.012s\n\nOK\n"),
            n("Ran 3 tests in 0.020s\n\nOK\n")
        );
        assert_eq!(
            n("=== 2 passed in 0.03s ==="),
            n("=== 2 passed in 1.10s ===")
        );
        assert_eq!(
            n("Analysis took 0.3 seconds (0.04s to load, 0.3s running 69 checks on 87 files)"),
            n("Analysis took 0.5 seconds (0.04s to load, 0.3s running 69 checks on 87 files)")
        );
        assert_eq!(
            n("[+] Time elapsed: 0.0062 sec."),
            n("[+] Time elapsed: 0.0071 sec.")
        );
        assert_eq!(n("Wall time: 1.2 seconds"), n("Wall time: 0.4 seconds"));
        assert_eq!(n("duration_ms: 16190"), n("duration_ms: 181728"));
        assert_eq!(
            n("real\t0m1.234s\nuser\t0m0.100s\n"),
            n("real\t0m2.000s\nuser\t0m0.300s\n")
        );
        // the file count still matters
        assert_ne!(
            n("took 0.3 seconds on 87 files"),
            n("took 0.3 seconds on 88 files")
        );
    }

    #[test]
    fn a_bare_number_after_in_is_not_a_duration() {
        assert_ne!(n("found in 3 files"), n("found in 4 files"));
        assert_ne!(n("in 2024 we"), n("in 2025 we"));
    }

    #[test]
    fn pids_and_sessions_are_masked() {
        assert_eq!(
            n("Command still running (session swift-cove-12, pid 4242)."),
            n("Command still running (session calm-reef-77, pid 999).")
        );
        assert_eq!(n("PID: 77"), n("PID: 78"));
        // Gemini CLI's shell tool ends each output with the process group's id
        assert_eq!(
            n("Exit Code: 1\nSignal: (none)\nBackground PIDs: (none)\nProcess Group PGID: 48213"),
            n("Exit Code: 1\nSignal: (none)\nBackground PIDs: (none)\nProcess Group PGID: 48377")
        );
        assert_ne!(n("Exit Code: 1\nPGID: 7"), n("Exit Code: 2\nPGID: 7"));
        assert_eq!(n("[1] 12345\n"), n("[1] 23456\n"));
        assert_ne!(n("session 2 of 3"), n("session 3 of 3"));
    }

    #[test]
    fn prompt_counters_are_masked() {
        assert_eq!(n("In [12]: x\nOut[12]: 3\n"), n("In [13]: x\nOut[13]: 3\n"));
        assert_ne!(n("Out[12]: 3\n"), n("Out[12]: 4\n"));
    }

    #[test]
    fn uuids_timestamps_and_request_ids_are_masked() {
        assert_eq!(
            n("job 5b1c2d3e-1111-4222-8333-944455556666 queued at 2026-03-13T19:44:50.935Z"),
            n("job 0b6fff8a-4d86-4dbd-b022-9e7a745a9eae queued at 2026-03-13T19:45:33.031Z")
        );
        assert_eq!(
            n("at 2026-03-13 19:44:50 ok"),
            n("at 2026-03-14 08:00:01 ok")
        );
        assert_eq!(
            n("rate limited (request id: a1b2c3d4e5)"),
            n("rate limited (request id: f9e8d7c6b5)")
        );
        assert_eq!(
            n("x-request-id: GJOGAOf-hoLS20MAABCM"),
            n("x-request-id: Hkk2lsOf-hoLS20MAXYZ")
        );
        assert_eq!(
            n("error req_011CZ1eqbb4X9uuaufHsbtsZ"),
            n("error req_011CZ1etUm8axu5EuqVKuhhh")
        );
        // a date alone and `date`'s default output are kept
        assert_ne!(n("2026-03-13"), n("2026-03-14"));
        assert_ne!(
            n("Mon Jan  1 12:00:01 UTC 2024"),
            n("Mon Jan  1 12:00:02 UTC 2024")
        );
    }

    #[test]
    fn a_test_runners_timings_are_masked() {
        // Go: a test's time in parentheses, a package's after a tab at the line's end
        assert_eq!(
            n("--- FAIL: TestParse (0.00s)\n    parse_test.go:14: got 3, want 4\nFAIL\nFAIL\texample.com/parse\t0.123s\nFAIL"),
            n("--- FAIL: TestParse (0.01s)\n    parse_test.go:14: got 3, want 4\nFAIL\nFAIL\texample.com/parse\t0.418s\nFAIL")
        );
        // Jest and Mocha per test, nextest's bracket
        assert_eq!(
            n("  ✓ adds (3 ms)\n  ✕ subtracts (12 ms)"),
            n("  ✓ adds (2 ms)\n  ✕ subtracts (9 ms)")
        );
        assert_eq!(n("    ✔ works (45ms)"), n("    ✔ works (51ms)"));
        assert_eq!(
            n("        PASS [   0.003s] demo tests::adds"),
            n("        PASS [   0.011s] demo tests::adds")
        );
        // what the run says still counts
        assert_ne!(
            n("--- FAIL: TestParse (0.00s)"),
            n("--- FAIL: TestLex (0.00s)")
        );
        assert_ne!(
            n("ok  \texample.com/a\t0.1s"),
            n("FAIL\texample.com/a\t0.1s")
        );
        // a duration that is not set off is kept: a figure in a sentence, a wait's progress
        assert_ne!(
            n("retry after backoff 5s now"),
            n("retry after backoff 9s now")
        );
        assert_ne!(n("Waiting (45s elapsed)"), n("Waiting (50s elapsed)"));
        assert_ne!(n("timeout\t30s here"), n("timeout\t60s here"));
        assert_ne!(n("(3 apples)"), n("(4 apples)"));
    }

    #[test]
    fn a_servers_and_a_mails_date_time_is_masked() {
        let reply = |date: &str| {
            n(&format!(
                "HTTP/1.1 503 Service Unavailable\nDate: {date}\nContent-Type: text/html\n\nService Unavailable"
            ))
        };
        assert_eq!(
            reply("Sun, 06 Dec 2026 23:10:34 GMT"),
            reply("Sun, 06 Dec 2026 23:11:02 GMT")
        );
        assert_eq!(
            n("Date: Mon, 7 Dec 2026 09:01:02 +0000 (UTC)"),
            n("Date: Mon, 7 Dec 2026 09:14:55 +0000 (UTC)")
        );
        assert_eq!(
            n("Sun, 06 Dec 2026 23:10:34 GMT"),
            "<*>",
            "the zone goes with it"
        );
        // A date alone, `date`'s default output, and a clock time elsewhere are kept.
        assert_ne!(
            n("Released Sun, 06 Dec 2026"),
            n("Released Mon, 07 Dec 2026")
        );
        assert_ne!(
            n("Sun Dec  6 23:10:34 UTC 2026"),
            n("Sun Dec  6 23:11:02 UTC 2026")
        );
        assert_ne!(n("Sun, 06 Dec 2026 23:10"), n("Sun, 06 Dec 2026 23:11"));
        assert_ne!(
            n("Sunday, 06 Dec 2026 23:10:34 GMT"),
            n("Sunday, 06 Dec 2026 23:11:02 GMT")
        );
    }

    #[test]
    fn buildkits_step_times_are_masked() {
        let build = |a: &str, b: &str, c: &str| {
            n(&format!(
                "#5 [3/5] RUN pip install -r requirements.txt\n#5 {a} Collecting flask==3.0.0\n#5 {b} ERROR: No matching distribution found for torch==2.9.9\n#5 ERROR: process \"/bin/sh -c pip install -r requirements.txt\" did not complete successfully: exit code: 1\n#6 DONE {c}s\n"
            ))
        };
        assert_eq!(
            build("0.512", "1.204", "0.9"),
            build("0.498", "3.117", "12.3")
        );
        assert!(build("0.512", "1.204", "0.9").contains("#5 <*> Collecting flask==3.0.0"));
        // What the step says is kept, and so are figures that are not its time.
        assert_ne!(
            n("#5 0.512 Collecting flask"),
            n("#5 0.512 Collecting torch")
        );
        assert_ne!(n("#5 [3/5] RUN make"), n("#5 [4/5] RUN make"));
        assert_ne!(n("#5 12 files"), n("#5 13 files"));
        assert_ne!(n("# 0.512 x"), n("# 0.600 x"));
        assert_ne!(n("#5 DONE 0.9s later"), n("#5 DONE 1.9s later"));
    }

    #[test]
    fn javas_identity_hash_is_masked() {
        assert_eq!(
            n("expected: com.example.Order@6d06d69c but was: com.example.Order@7852e922"),
            n("expected: com.example.Order@1b6d3586 but was: com.example.Order@4554617c")
        );
        assert_eq!(n("[I@1b6d3586"), n("[I@74a14482"));
        assert_eq!(
            n("[Ljava.lang.String;@1540e19d"),
            n("[Ljava.lang.String;@677327b6")
        );
        // The class is kept; an e-mail, a scoped package, a uuid and a word are not hashes.
        assert_ne!(n("a.Order@6d06d69c"), n("a.Item@6d06d69c"));
        assert_ne!(n("mail dev@a1b2c3.io"), n("mail dev@a1b2c4.io"));
        assert_ne!(
            n("npm i @types/node@18.19.3"),
            n("npm i @types/node@18.19.4")
        );
        assert_ne!(n("x@deadbeef"), n("x@deadbeee"));
        assert_ne!(n("Foo@1234"), n("Foo@1235"));
    }

    #[test]
    fn valgrinds_and_a_sanitizers_pid_is_masked() {
        let report = |pid: u32| {
            n(&format!(
                "=={pid}== Memcheck, a memory error detector\n=={pid}== Invalid read of size 4\n=={pid}==    at 0x109162: main (main.c:6)\n=={pid}== ERROR SUMMARY: 1 errors from 1 contexts"
            ))
        };
        assert_eq!(report(12345), report(9876));
        assert_eq!(
            n("==4242==ERROR: LeakSanitizer: detected memory leaks"),
            n("==77==ERROR: LeakSanitizer: detected memory leaks")
        );
        // What follows is kept, and a rule of `=` signs is no pid.
        assert_ne!(n("==1== Invalid read"), n("==1== Invalid write"));
        assert_ne!(n("==12 apples=="), n("==13 apples=="));
        assert_eq!(n("================"), "================");
    }

    #[test]
    fn nodes_pid_in_its_warnings_is_masked() {
        let w = |pid: u32| {
            n(&format!(
                "(node:{pid}) [DEP0040] DeprecationWarning: The `punycode` module is deprecated."
            ))
        };
        assert_eq!(w(12345), w(871));
        assert_ne!(n("(node:12) x"), n("(nodes:13) x"));
        assert_ne!(n("(node:v12)"), n("(node:v13)"));
    }

    #[test]
    fn ipythons_cell_counter_and_kernel_file_are_masked() {
        let tb = |cell: u32, pid: u32, hash: u64| {
            n(&format!(
                "---------------------------------------------------------------------------\nNameError                                 Traceback (most recent call last)\nCell In[{cell}], line 1\n----> 1 foo()\n\nFile /tmp/ipykernel_{pid}/{hash}.py:3, in foo()\nNameError: name 'bar' is not defined"
            ))
        };
        assert_eq!(tb(3, 1234, 2_345_678_901), tb(4, 1234, 3_141_592_653));
        assert_eq!(tb(3, 1234, 2_345_678_901), tb(9, 777, 2_718_281_828));
        assert_eq!(
            n("Input In [5], in <cell line: 1>()"),
            n("Input In [6], in <cell line: 1>()")
        );
        // The line in the cell is kept; other brackets are not a cell counter.
        assert_ne!(n("Cell In[3], line 1"), n("Cell In[3], line 2"));
        assert_ne!(n("Sell In[3]"), n("Sell In[4]"));
        assert_ne!(n("/tmp/ipykernel_x/1.py"), n("/tmp/ipykernel_x/2.py"));
    }

    #[test]
    fn a_mocks_address_is_masked() {
        assert_eq!(
            n("E   AssertionError: assert <MagicMock name='mock.get' id='140234567890'> == 1"),
            n("E   AssertionError: assert <MagicMock name='mock.get' id='139871234567'> == 1")
        );
        assert_ne!(n("<Mock id='12'>"), n("<Mock id='13'>"));
        assert_ne!(n("user id='1402345678'"), n("user id='1402345679'"));
        assert_eq!(
            n("ran in=5s"),
            n("ran in=7s"),
            "`in` is still read as a time word"
        );
    }

    #[test]
    fn unix_times_and_mktemp_names_are_masked() {
        assert_eq!(
            n("started pid 28633 at 1796609921.8235338\nworker crashed: out of memory"),
            n("started pid 28638 at 1796609921.9033606\nworker crashed: out of memory")
        );
        assert_eq!(
            n("{\"ts\":1796609921823,\"level\":\"error\",\"msg\":\"db timeout\"}"),
            n("{\"ts\":1796609925117,\"level\":\"error\",\"msg\":\"db timeout\"}")
        );
        assert_eq!(
            n("t0=1796609921823533817 retrying job 7: lock held"),
            n("t0=1796609925117009245 retrying job 7: lock held")
        );
        assert_eq!(
            n("span start_us=1796609921823533 status=ERROR"),
            n("span start_us=1796609925117009 status=ERROR")
        );
        assert_eq!(
            n("writing to /tmp/tmp.yVTV0DqUKo"),
            n("writing to /tmp/tmp.ZKoz4X05ZE")
        );
        // Ten digits without a fraction may be an id or a count; other lengths are not times.
        assert_ne!(n("order 1796609921 shipped"), n("order 1796609922 shipped"));
        assert_ne!(n("value 3.1415926535"), n("value 3.1415926536"));
        assert_ne!(n("total 12345678901234"), n("total 12345678901235"));
        assert_ne!(n("bytes 3345678901234567"), n("bytes 3345678901234568"));
        assert_ne!(n("v 0.1796609921.5"), n("v 0.1796609921.6"));
        assert_ne!(n("/data/tmp.ab"), n("/data/tmp.cd"));
        assert_ne!(
            n("see tmp.yVTV0DqUKo"),
            n("see tmp.ZKoz4X05ZE"),
            "only after a `/`"
        );
    }

    #[test]
    fn a_killed_process_pid_and_a_compiler_temp_file_are_masked() {
        assert_eq!(
            n("exit code 139\nbash: line 1: 20117 Segmentation fault      ./crash"),
            n("exit code 139\nbash: line 1: 20126 Segmentation fault      ./crash")
        );
        assert_eq!(
            n("/bin/sh: 1: 4242 Killed                  python3 train.py"),
            n("/bin/sh: 1: 4250 Killed                  python3 train.py")
        );
        assert_ne!(
            n("bash: line 1: 20117 things happened"),
            n("bash: line 1: 20126 things happened"),
            "only the shell's own report of a signal"
        );
        assert_eq!(
            n("/usr/bin/ld: /tmp/ccEa2Dct.o: in function `main':"),
            n("/usr/bin/ld: /tmp/ccBvynEp.o: in function `main':")
        );
        assert_ne!(n("see ccEa2Dct.o"), n("see ccBvynEp.o"), "only after a `/`");
        assert_ne!(n("/tmp/ccEa2Dct.o2"), n("/tmp/ccBvynEp.o2"));
    }

    #[test]
    fn log_date_times_are_masked() {
        assert_eq!(
            n("[06/Dec/2026 23:10:34] \"GET /api/items HTTP/1.1\" 500 145"),
            n("[06/Dec/2026 23:11:50] \"GET /api/items HTTP/1.1\" 500 145")
        );
        assert_eq!(
            n("127.0.0.1 - - [06/Dec/2026:23:10:34 +0000] \"GET / HTTP/1.1\" 500 612"),
            n("127.0.0.1 - - [07/Dec/2026:01:02:03 +0000] \"GET / HTTP/1.1\" 500 612")
        );
        assert_eq!(
            n("Dec  6 23:10:34 host app: started"),
            n("Dec 16 03:00:01 host app: started")
        );
        assert_eq!(
            n("I1206 23:10:34.123456 140234567890 main.cc:12] started"),
            n("I1207 01:00:00.000001 77 main.cc:12] started")
        );
        // The rest of the line, a date alone, and lines that only look alike are kept.
        assert_ne!(
            n("[06/Dec/2026 23:10:34] GET /a"),
            n("[06/Dec/2026 23:10:34] GET /b")
        );
        assert_ne!(n("06/Dec/2026"), n("07/Dec/2026"));
        assert_ne!(n("Dec  6 23:10 meeting"), n("Dec  6 23:11 meeting"));
        assert_ne!(n("I1206 is an id"), n("I1207 is an id"));
        assert_ne!(
            n("I1206 23:10:34.1 140 a.cc:1] x"),
            n("I1206 23:10:34.1 140 a.cc:1] y")
        );
    }

    #[test]
    fn vitests_start_time_and_phase_durations_are_masked() {
        let summary = |start: &str, t: [u32; 3]| {
            n(&format!(
                " Test Files  1 failed (1)\n      Tests  1 failed | 3 passed (4)\n   Start at  {start}\n   Duration  1.{}s (transform {}ms, setup 0ms, collect {}ms, tests 5ms)\n",
                t[0], t[1], t[2]
            ))
        };
        assert_eq!(
            summary("23:10:34", [23, 45, 120]),
            summary("9:02:11", [71, 38, 133])
        );
        // The counts are kept; a figure in a list that is no duration is kept.
        assert_ne!(n("Tests  1 failed (4)"), n("Tests  2 failed (4)"));
        assert_ne!(n("(height 5m, width 3m)"), n("(height 6m, width 3m)"));
        assert_ne!(n("(apples 45ms"), n("(apples 46ms"));
        assert_ne!(n("Start at 23:10:34 sharp"), n("Start at 23:11:34 sharp"));
    }

    #[test]
    fn java_loggers_stamps_and_spring_boots_pid_are_masked() {
        let boot = |pid: u32, up: &str, at: &str| {
            n(&format!(
                "2026-12-07T00:{at}.123Z  INFO {pid} --- [           main] com.shop.App : Starting App\n2026-12-07T00:{at}.456Z ERROR {pid} --- [           main] o.s.boot.SpringApplication : Application run failed\nStarted App in 2.3 seconds (process running for {up})"
            ))
        };
        assert_eq!(boot(12345, "2.789", "10:34"), boot(777, "3.1", "11:02"));
        assert_eq!(
            n("Dec 06, 2026 11:10:34 PM org.apache.catalina.startup.Catalina start\nSEVERE: failed"),
            n("Dec 07, 2026 9:01:02 AM org.apache.catalina.startup.Catalina start\nSEVERE: failed")
        );
        assert_eq!(
            n("Time: 00:00.123, Memory: 6.00 MB"),
            n("Time: 00:01.907, Memory: 6.00 MB")
        );
        // The logger, the message, the memory and a count before `---` that follows no level
        // are kept.
        assert_ne!(
            n("  INFO 1 --- [main] a.B : x"),
            n("  INFO 1 --- [main] a.C : x")
        );
        assert_ne!(
            n("Time: 00:00.123, Memory: 6.00 MB"),
            n("Time: 00:00.123, Memory: 8.00 MB")
        );
        assert_ne!(n("rows 12 --- done"), n("rows 13 --- done"));
        assert_ne!(
            n("Dec 06, 2026 11:10:34 PM"),
            n("Dec 06, 2026 11:10:35 PM"),
            "no record after it"
        );
        assert_ne!(n("time: 10:45"), n("time: 10:46"));
        // A record stamp needs its hour.
        assert_ne!(
            n("Dec 06, 2026 :10:34 PM org.a.B start"),
            n("Dec 06, 2026 :10:35 PM org.a.B start")
        );
    }

    #[test]
    fn an_elapsed_time_written_as_a_clock_is_masked() {
        assert_eq!(n("elapsed: 00:00:02"), n("elapsed: 00:01:17"));
        assert_eq!(n("took 0:03:41.5 total"), n("took 0:00:09.1 total"));
        // Not after other time words, and not without seconds.
        assert_ne!(n("time: 10:45:00"), n("time: 10:46:00"));
        assert_ne!(n("elapsed 10:45"), n("elapsed 10:46"));
    }

    #[test]
    fn a_test_runners_random_seed_is_masked() {
        assert_eq!(
            n("Using --randomly-seed=1234567890\nrootdir: /repo"),
            n("Using --randomly-seed=98765\nrootdir: /repo")
        );
        assert_eq!(
            n("Randomized with seed 31337"),
            n("Randomized with seed 4242")
        );
        assert_eq!(n("Random seed: 12"), n("Random seed: 7"));
        // A seed that is a word, and a number after other words, are kept.
        assert_ne!(n("seeds 12"), n("seeds 13"));
        assert_ne!(n("seed=abc"), n("seed=abd"));
    }

    #[test]
    fn pythons_temporary_names_are_masked() {
        assert_eq!(
            n("Error: could not write /tmp/tmpk3j2l1x9/out.bin: Permission denied"),
            n("Error: could not write /tmp/tmpa_81bq0z/out.bin: Permission denied")
        );
        assert_eq!(
            n("  File \"/tmp/tmpab12cd34.py\", line 3"),
            n("  File \"/tmp/tmpzz90xy11.py\", line 3")
        );
        // other names are kept
        assert_ne!(n("/tmp/tmpbuild01/a"), n("/tmp/tmpbuild02/a"));
        assert_ne!(n("/var/tmpk3j2l1x9a"), n("/var/tmpk3j2l1x9b"));
        assert_ne!(n("tmpk3j2l1x9 is set"), n("tmpa_81bq0z is set"));
    }

    #[test]
    fn pytests_session_folder_and_rusts_thread_ids_are_masked() {
        assert_eq!(
            n("E   FileNotFoundError: '/tmp/pytest-of-root/pytest-12/test_export0/out.bin'"),
            n("E   FileNotFoundError: '/tmp/pytest-of-root/pytest-13/test_export0/out.bin'")
        );
        assert_ne!(
            n("/tmp/pytest-of-root/pytest-12/test_export0/a"),
            n("/tmp/pytest-of-root/pytest-12/test_export1/a")
        );
        assert_eq!(
            n("thread 'main' (48121) panicked at src/main.rs:4:5:\nattempt to add with overflow"),
            n("thread 'main' (48377) panicked at src/main.rs:4:5:\nattempt to add with overflow")
        );
        assert_ne!(
            n("thread 'main' (48121) panicked at src/main.rs:4:5:"),
            n("thread 'main' (48121) panicked at src/main.rs:9:5:")
        );
        assert_ne!(n("item (3) panicked"), n("item (4) panicked"));
    }

    #[test]
    fn npms_log_file_of_each_run_is_masked() {
        assert_eq!(
            n("npm ERR! A complete log of this run can be found in:\nnpm ERR!     /root/.npm/_logs/2026-12-06T21_15_45_123Z-debug-0.log"),
            n("npm ERR! A complete log of this run can be found in:\nnpm ERR!     /root/.npm/_logs/2026-12-06T21_16_02_907Z-debug-0.log")
        );
        assert_ne!(
            n("/logs/2026-12-06T21_15_45Z-a.log"),
            n("/logs/2026-12-06T21_15_45Z-b.log")
        );
        assert_ne!(n("build_2026-12-06T21_15"), n("build_2026-12-06T21_16"));
    }

    #[test]
    fn the_address_of_a_printed_object_is_masked() {
        // Python prints an object without a representation of its own, a coroutine never
        // awaited, a function, by where it lies in memory: a new place on every run.
        assert_eq!(
            n("<__main__.Config object at 0x7f3a2c1b4d90>\nTraceback (most recent call last):"),
            n("<__main__.Config object at 0x7f91e0a3c2b0>\nTraceback (most recent call last):")
        );
        assert_eq!(
            n("RuntimeWarning: coroutine <coroutine object main at 0x104c2d1f0> was never awaited"),
            n("RuntimeWarning: coroutine <coroutine object main at 0x1050f3e40> was never awaited")
        );
        // what the object is still counts, and so do other hex figures
        assert_ne!(
            n("<__main__.Config object at 0x7f3a2c1b4d90>"),
            n("<__main__.Settings object at 0x7f3a2c1b4d90>")
        );
        assert_ne!(
            n("rip 0x555555555149 <main+4>"),
            n("rip 0x55555555514d <main+8>")
        );
        assert_ne!(
            n("Breakpoint 1 at 0x555555555149: file t.c, line 5."),
            n("Breakpoint 1 at 0x555555555189: file t.c, line 7.")
        );
        assert_ne!(n("value at 0x1f>"), n("value at 0x2f>"));
    }

    #[test]
    fn a_clock_time_opening_a_log_line_is_masked() {
        // Elixir's logger, a host stamping its output, Python's logging with a time format
        assert_eq!(
            n("16:45:25.256 [warning] GitLogReader: could not resolve HEAD\n16:45:25.301 [info] done"),
            n("16:47:02.017 [warning] GitLogReader: could not resolve HEAD\n16:47:02.100 [info] done")
        );
        assert_eq!(
            n("[19:47:51.113] Wrong flag!"),
            n("[20:03:07.480] Wrong flag!")
        );
        assert_eq!(
            n("  08:50:16 INFO root: starting"),
            n("  9:02:44 INFO root: starting")
        );
        assert_eq!(n("(12:00:01,250) ready"), n("(12:00:09,001) ready"));
        // a shell's own message under the stamp keeps its line counter masked
        assert_eq!(
            n("[12:00:01] /bin/bash: line 3: tsc: command not found"),
            n("[12:04:17] /bin/bash: line 9: tsc: command not found")
        );
        assert_ne!(
            n("[12:00:01] /bin/bash: line 3: tsc: command not found"),
            n("[12:00:01] /bin/bash: line 3: tsx: command not found")
        );
        // what the line says still counts
        assert_ne!(
            n("16:45:25 [info] 3 tests failed"),
            n("16:45:26 [info] 2 tests failed")
        );
        // a clock time elsewhere in a line is data (a departure time), and what only looks
        // like one is kept: a file's line and columns, an out-of-range figure, a ratio
        assert_ne!(
            n("departs 14:00:00 from JFK"),
            n("departs 15:00:00 from JFK")
        );
        assert_ne!(n("src/a.rs:12:34:56: error"), n("src/a.rs:12:34:57: error"));
        assert_ne!(n("25:61:00 total"), n("25:62:00 total"));
        assert_ne!(n("12:30 ratio"), n("12:31 ratio"));
        assert_ne!(n("12:30:45:10 frames"), n("12:30:45:11 frames"));
        assert_ne!(n("12:30:45.5.1 version"), n("12:30:46.5.1 version"));
    }

    #[test]
    fn wrapper_nonces_are_masked() {
        let a = "<<<EXTERNAL_UNTRUSTED_CONTENT id=\"8f3a\">>>\nPage not found\n<<<END_EXTERNAL_UNTRUSTED_CONTENT id=\"8f3a\">>>";
        let b = "<<<EXTERNAL_UNTRUSTED_CONTENT id=\"c1d2\">>>\nPage not found\n<<<END_EXTERNAL_UNTRUSTED_CONTENT id=\"c1d2\">>>";
        assert_eq!(n(a), n(b));
        let c = b.replace("Page not found", "Welcome");
        assert_ne!(n(a), n(&c));
    }

    #[test]
    fn multibyte_text_never_panics() {
        for s in [
            "é",
            "pid é",
            "in 3 µs",
            "<<<É id=\"",
            "2026-03-1é",
            "req_é",
            "session: é1234",
            "[1] ",
            "In [",
            "real \u{2003}",
        ] {
            let _ = n(s);
        }
        assert_eq!(n("in 3 µs"), n("in 4 µs"));
    }
}

#[cfg(test)]
mod props {
    use super::*;
    use proptest::prelude::*;

    /// [`scan_inline`] trying every pattern at every byte.
    fn scan_inline_every_byte(line: &str, out: &mut String) {
        let bytes = line.as_bytes();
        let (mut i, mut copied) = (0, 0);
        while i < bytes.len() {
            let b = bytes[i];
            let at_word_start = i == 0 || !is_word_byte(bytes[i - 1]);
            let hit = if b == b'<' {
                wrapper_marker(line, i)
            } else if at_word_start && b.is_ascii_alphanumeric() {
                let run = bytes[i..].iter().take_while(|&&c| is_word_byte(c)).count();
                uuid_at(bytes, i)
                    .or_else(|| iso_datetime_at(bytes, i))
                    .or_else(|| keyword_at(line, i))
                    .or_else(|| req_token_at(bytes, i))
                    .or_else(|| {
                        (b == b'0' && (8..=18).contains(&run))
                            .then(|| repr_address_at(bytes, i, run))
                            .flatten()
                    })
                    .or_else(|| {
                        b.is_ascii_digit()
                            .then(|| set_off_duration_at(bytes, i))
                            .flatten()
                    })
                    .or_else(|| (run == 11).then(|| temp_name_at(bytes, i)).flatten())
                    .or_else(|| (run == 3).then(|| mktemp_name_at(bytes, i)).flatten())
                    .or_else(|| (run == 8).then(|| compiler_temp_at(bytes, i)).flatten())
                    .or_else(|| epoch_at(bytes, i, run))
                    .or_else(|| (run == 6).then(|| pytest_session_at(bytes, i)).flatten())
                    .or_else(|| thread_id_at(bytes, i, run))
                    .or_else(|| rfc_datetime_at(bytes, i))
                    .or_else(|| identity_hash_at(bytes, i, run))
                    .or_else(|| node_pid_at(bytes, i, run))
                    .or_else(|| {
                        b.is_ascii_digit()
                            .then(|| cell_counter_at(bytes, i, run))
                            .flatten()
                    })
                    .or_else(|| ipykernel_at(bytes, i))
                    .or_else(|| {
                        b.is_ascii_digit()
                            .then(|| spring_at(bytes, i, run))
                            .flatten()
                    })
                    .or_else(|| slash_datetime_at(bytes, i))
                    .or_else(|| {
                        b.is_ascii_digit()
                            .then(|| listed_duration_at(bytes, i))
                            .flatten()
                    })
                    .or_else(|| (run == 2).then(|| mock_id_at(bytes, i)).flatten())
            } else {
                None
            };
            match hit {
                Some((keep_end, mask_end)) => {
                    out.push_str(&line[copied..keep_end]);
                    out.push_str(MASK);
                    copied = mask_end;
                    i = mask_end.max(i + 1);
                }
                None => i += 1,
            }
        }
        out.push_str(&line[copied..]);
    }

    /// [`keyword_value_at`] as it was before [`keyword_named`]: the word read as a string and
    /// its value looked for whatever it is.
    fn keyword_value_at_by_str(line: &str, i: usize, word_len: usize) -> Hit {
        let mut buf = [0u8; 16];
        for (d, s) in buf.iter_mut().zip(&line.as_bytes()[i..i + word_len]) {
            *d = s.to_ascii_lowercase();
        }
        // The word is ASCII (letters, digits, `_`, `-`).
        let word = std::str::from_utf8(&buf[..word_len]).ok()?;
        keyword_value(line, i, word.trim_end_matches('-'))
    }

    fn agrees_with_every_byte(line: &str) -> Result<(), TestCaseError> {
        let (mut fast, mut slow) = (String::new(), String::new());
        scan_inline(line, &mut fast);
        scan_inline_every_byte(line, &mut slow);
        prop_assert_eq!(fast, slow, "{:?}", line);
        Ok(())
    }

    #[test]
    fn stepping_over_words_changes_nothing_on_real_shapes() {
        for line in [
            "took 12ms, pid=4242 session: ab12cd34 request id: r-99x1",
            "123e4567-e89b-12d3-a456-426614174000 at 2024-05-01T10:20:30Z req_0123456789abcdef",
            "req_0123456789 x-request-id: 9f8e7d6c elapsed 3.5 s <<<WRAP id=\"n1\">>> done",
            "a-in 5 ms, b_in 5 ms, 12345678-1234-1234-1234-123456789abc_x",
            "élapsed in 4s; Duration_ms=17 time_ms:3 café-in 2 min",
        ] {
            agrees_with_every_byte(line)
                .map_err(|e| e.to_string())
                .unwrap_or_else(|e| panic!("{e}"));
        }
    }

    #[test]
    fn every_keyword_passes_the_length_filter() {
        for w in TIME_WORDS.iter().chain(DURATION_KEYS).chain(ID_WORDS) {
            assert!(maybe_keyword(w.as_bytes()[0], w.len()), "{w}");
            assert!(
                maybe_keyword(w.as_bytes()[0].to_ascii_uppercase(), w.len()),
                "{w}"
            );
        }
        // The words `keyword_value_at` reads a value after are all listed.
        for w in [
            "pid",
            "pgid",
            "session",
            "session_id",
            "request-id",
            "x-request-id",
            "request",
            "seed",
            "randomly-seed",
        ] {
            assert!(ID_WORDS.contains(&w), "{w}");
        }
        assert!(!maybe_keyword(b'd', "done".len()));
        assert!(!maybe_keyword(b'_', 3));
    }

    proptest! {
        #[test]
        fn prop_stepping_over_words_changes_nothing(
            parts in proptest::collection::vec(
                "(in|took|elapsed|pid|session_id|request-id|req_abcdef12345|req_0123456789|req_0123456789_x|x_in|a-in|é-in|<<<M id=\"r1\">>>|<<|2024-05-01T10:20:30Z|2024-05-01 10:20:30|123e4567-e89b-12d3-a456-426614174000|[a-f0-9]{8}-|[a-z0-9_]{1,9}|[ :=<>\"._-]{1,3}|é|[0-9]{1,4} ?(ms|s|sec)|\t|[()\\[\\]]| at |0x[0-9a-f]{4,18}>?|2024-05-01T10_20_30(_123)?Z?|/tmp[a-z0-9_]{7,9}|/pytest-[0-9]{1,3}/|' \\(|\\) panicked|(Sun|Mon|Sux), [0-9]{1,3} (Dec|Dex) 2026 [0-9]{1,2}:[0-9]{2}(:[0-9]{2})?( GMT| \\+0000| UT| Z|x)?|seed[ =][0-9]{1,4}|--randomly-seed=[0-9]{1,4}|[a-z;\\[]@[0-9a-f]{3,9}[.-]?|\\(node:[0-9]{1,6}\\)|Cell In\\[[0-9]{1,3}\\]|(INFO|ERRO|x) {1,2}[0-9]{1,6} --- |running for [0-9]{1,2}(\\.[0-9]{1,3})?\\)?|Input In \\[[0-9]{1,3}\\]|/ipykernel_[0-9]{0,5}/[0-9]{0,6}(\\.py)?|id='[0-9]{5,13}'>|[0-9]{2}/(Dec|Dex)/2026[: ][0-9]{2}:[0-9]{2}(:[0-9]{2})?( \\+0000)?|\\((transform|x) [0-9]{1,3} ?(ms|s|m)[,)]|, setup [0-9]ms[,)]|/tmp\\.[A-Za-z0-9]{9,11}|/cc[A-Za-z0-9]{5,7}\\.[a-z]{0,7}|1[0-9]{9}(\\.[0-9]{1,10})?|1[0-9]{12,13}|[12][0-9]{15,16}|[12][0-9]{18,19}|\n)",
                0..24,
            )
        ) {
            agrees_with_every_byte(&parts.concat())?;
        }

        /// The word patterns tried only where the word's length and next byte allow them
        /// agree with every pattern tried at every byte, on arbitrary text and on noise-shaped
        /// pieces shifted over an 8-byte step.
        #[test]
        fn prop_word_filters_change_nothing(
            pad in "[a _]{0,8}",
            parts in proptest::collection::vec(
                "((?s).{0,6}|[0-9a-fA-F]{1,12}|[0-9]{4}-|[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}|2026-03-13[T ]19:44(:50(\\.935)?)?(Z|[+-]0[0-9]:?00)?|req_[a-z0-9]{8,14}|(in|took|time|pid|session|request|x-request-id|duration_ms)[ :=-]{0,2}[0-9]{0,4}(ms| s)?|[ :=\"._<>-]{1,3}|é|\u{3000})",
                0..16,
            )
        ) {
            agrees_with_every_byte(&format!("{pad}{}", parts.concat()))?;
        }

        #[test]
        fn prop_word_filters_change_nothing_on_any_text(s in "(?s).{0,80}") {
            agrees_with_every_byte(&s)?;
        }

        /// Reading a keyword's value after naming it among the keywords first changes no
        /// match: keywords in any case, with `-`s, near-keywords, and arbitrary words.
        #[test]
        fn prop_keyword_named_changes_no_match(
            line in "(in|IN|took|Elapsed|time|duration|after|wall|duration_ms|elapsedms|tookms|took_ms|time_ms|pid|Session|sessionid|session_id|session-id|requestid|request_id|request-id|x-request-id|request|ins|tim|pids|sessions|[a-z0-9_-]{1,16}|(?s).{0,4})(-{0,2})([ :=\"'#]{0,3})(id[: ]{1,2})?([0-9]{1,5}(\\.[0-9]{1,2})? ?(ms|s|sec|min)?|[a-z0-9-]{4,12}|(?s).{0,6})"
        ) {
            let bytes = line.as_bytes();
            let word_len = bytes
                .iter()
                .take_while(|b| is_word_byte(**b) || **b == b'-')
                .count()
                .min(16);
            prop_assert_eq!(
                keyword_value_at(&line, 0, word_len),
                keyword_value_at_by_str(&line, 0, word_len),
                "{:?}", line
            );
        }

        /// The first-letter test of [`mask_time_line`] changes nothing.
        #[test]
        fn prop_time_lines_first_letter_changes_nothing(
            line in "(real|user|sys|rea|Real|s|u|(?s).{0,3})([ \t]{0,2})([0-9ms.,]{0,8}|(?s).{0,8})(\n)?"
        ) {
            let (mut got, mut want) = (String::new(), String::new());
            let got_rest = mask_time_line(&line, &mut got);
            let want_rest = mask_time_words(&line, &mut want);
            prop_assert_eq!(got_rest, want_rest);
            prop_assert_eq!(got, want);
        }

        #[test]
        fn prop_the_length_filter_changes_no_keyword_match(
            line in "(in|IN|took|Elapsed|time|duration|after|wall|duration_ms|elapsedms|tookms|time_ms|pid|Session|sessionid|session_id|session-id|requestid|request_id|request-id|x-request-id|request|ins|tim|pids|sessions|[a-z_-]{1,12})(-{0,2})([ :=\"'#]{0,3})(id[: ]{1,2})?([0-9]{1,5}(\\.[0-9]{1,2})? ?(ms|s|sec|min)?|[a-z0-9-]{4,12})"
        ) {
            let bytes = line.as_bytes();
            let word_len = bytes
                .iter()
                .take_while(|b| is_word_byte(**b) || **b == b'-')
                .count();
            let unfiltered = if word_len <= 16 && bytes[0].is_ascii_alphabetic() {
                keyword_value_at(&line, 0, word_len)
            } else {
                None
            };
            prop_assert_eq!(keyword_at(&line, 0), unfiltered, "{}", line);
        }

        #[test]
        fn prop_never_panics_and_is_deterministic(s in "(?s).{0,80}") {
            prop_assert_eq!(normalize_text(&s), normalize_text(&s));
        }

        #[test]
        fn prop_noise_shaped_text_never_panics(s in "[a-z0-9 :=\\[\\]<>\"./_-]{0,60}", k in "(in|took|pid|session|request id|req_|/bin/bash: line|In \\[|<<<X id=\")") {
            let _ = normalize_text(&format!("{k}{s}"));
        }

        /// Lines cut 8 bytes at a time are the lines `split_inclusive` cuts.
        #[test]
        fn prop_lines_are_cut_as_split_inclusive(
            s in "(\n|\r\n|a|7|é|\u{3000}| |took 3 s|pid 42|2026-03-13T19:44:50Z|/bin/bash: line 3: ){0,30}"
        ) {
            prop_assert_eq!(
                crate::swar::lines_inclusive(&s).collect::<Vec<_>>(),
                s.split_inclusive('\n').collect::<Vec<_>>()
            );
            let mut want = String::new();
            for line in s.split_inclusive('\n') {
                normalize_line(line, &mut want);
            }
            prop_assert_eq!(normalize_text(&s), want);
        }

        #[test]
        fn prop_plain_words_are_untouched(s in "[a-zA-Z ,.\n]{0,80}") {
            prop_assert_eq!(normalize_text(&s), s);
        }
    }
}
