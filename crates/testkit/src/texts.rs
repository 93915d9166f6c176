//! Realistic texts for the text detectors' tests: legitimate long texts that the seeds flagged
//! (or could flag) and must not be flagged by loopguard's defaults, and realistic loops.

/// 47 card names under one long shared lead-in.
pub fn card_list() -> String {
    let names = [
        "Lightning Bolt",
        "Counterspell",
        "Dark Ritual",
        "Giant Growth",
        "Swords to Plowshares",
        "Brainstorm",
        "Llanowar Elves",
        "Serra Angel",
        "Shivan Dragon",
        "Wrath of God",
        "Black Lotus",
        "Ancestral Recall",
        "Time Walk",
        "Mox Pearl",
        "Mox Sapphire",
        "Mox Jet",
        "Mox Ruby",
        "Mox Emerald",
        "Sol Ring",
        "Demonic Tutor",
        "Birds of Paradise",
        "Force of Will",
        "Thoughtseize",
        "Tarmogoyf",
        "Snapcaster Mage",
        "Jace, the Mind Sculptor",
        "Liliana of the Veil",
        "Path to Exile",
        "Fatal Push",
        "Ponder",
        "Preordain",
        "Delver of Secrets",
        "Young Pyromancer",
        "Monastery Swiftspear",
        "Goblin Guide",
        "Eidolon of the Great Revel",
        "Lava Spike",
        "Rift Bolt",
        "Skewer the Critics",
        "Boros Charm",
        "Atarka's Command",
        "Searing Blaze",
        "Light Up the Stage",
        "Bonecrusher Giant",
        "Embercleave",
        "Questing Beast",
        "Oko, Thief of Crowns",
    ];
    let mut s = String::from(
        "Here is the full card list from the deck export, in the order the file lists them:\n\n",
    );
    for (i, n) in names.iter().enumerate() {
        s.push_str(&format!("- Card {:02} of 47 in the imported tournament deck list (main deck, Modern legal): {n}\n", i + 1));
    }
    s.push_str("\nThat is 47 cards; the sideboard is in a separate file.\n");
    s
}

/// A reference list with similar citation lines.
pub fn citations() -> String {
    let mut s = String::from("## References\n\n");
    let items = [
        (
            "Vaswani, A. et al.",
            "Attention Is All You Need",
            "NeurIPS",
            2017,
        ),
        (
            "Devlin, J. et al.",
            "BERT: Pre-training of Deep Bidirectional Transformers",
            "NAACL",
            2019,
        ),
        (
            "Brown, T. et al.",
            "Language Models are Few-Shot Learners",
            "NeurIPS",
            2020,
        ),
        (
            "Raffel, C. et al.",
            "Exploring the Limits of Transfer Learning",
            "JMLR",
            2020,
        ),
        (
            "Radford, A. et al.",
            "Language Models are Unsupervised Multitask Learners",
            "OpenAI",
            2019,
        ),
        (
            "Kaplan, J. et al.",
            "Scaling Laws for Neural Language Models",
            "arXiv",
            2020,
        ),
        (
            "Hoffmann, J. et al.",
            "Training Compute-Optimal Large Language Models",
            "NeurIPS",
            2022,
        ),
        (
            "Ouyang, L. et al.",
            "Training Language Models to Follow Instructions",
            "NeurIPS",
            2022,
        ),
        (
            "Wei, J. et al.",
            "Chain-of-Thought Prompting Elicits Reasoning",
            "NeurIPS",
            2022,
        ),
        (
            "Touvron, H. et al.",
            "LLaMA: Open and Efficient Foundation Language Models",
            "arXiv",
            2023,
        ),
        (
            "Holtzman, A. et al.",
            "The Curious Case of Neural Text Degeneration",
            "ICLR",
            2020,
        ),
        (
            "Welleck, S. et al.",
            "Neural Text Generation with Unlikelihood Training",
            "ICLR",
            2020,
        ),
    ];
    for (i, (a, t, v, y)) in items.iter().enumerate() {
        s.push_str(&format!("[{}] {a} ({y}). {t}. {v}.\n", i + 1));
    }
    s
}

/// Two similar code blocks quoted for comparison.
pub fn compared_code_blocks() -> String {
    let before = "fn parse(input: &str) -> Result<Config, Error> {\n    let table: toml::Table = input.parse()?;\n    let name = table.get(\"name\").and_then(|v| v.as_str()).unwrap_or(\"default\");\n    let size = table.get(\"size\").and_then(|v| v.as_integer()).unwrap_or(16);\n    Ok(Config { name: name.to_owned(), size: size as usize })\n}\n";
    let after = "fn parse(input: &str) -> Result<Config, Error> {\n    let table: toml::Table = input.parse()?;\n    let name = table.get(\"name\").and_then(|v| v.as_str()).unwrap_or(\"default\");\n    let size = table.get(\"size\").and_then(|v| v.as_integer()).unwrap_or(32);\n    Ok(Config { name: name.to_owned(), size: usize::try_from(size)? })\n}\n";
    format!(
        "Here is the function before the change:\n\n```rust\n{before}```\n\nAnd after the change:\n\n```rust\n{after}```\n\nThe only differences are the default size (16 → 32) and the checked conversion.\n"
    )
}

/// A markdown table with many similar rows.
pub fn markdown_table() -> String {
    let mut s =
        String::from("| Endpoint | Method | Auth | Rate limit | Status |\n|---|---|---|---|---|\n");
    for (i, ep) in [
        "users",
        "orders",
        "items",
        "carts",
        "payments",
        "refunds",
        "invoices",
        "shipments",
        "returns",
        "reviews",
        "coupons",
        "sessions",
    ]
    .iter()
    .enumerate()
    {
        s.push_str(&format!(
            "| /api/v1/{ep} | GET | bearer token | {} req/min | stable |\n",
            60 + i * 10
        ));
        s.push_str(&format!(
            "| /api/v1/{ep}/{{id}} | GET | bearer token | {} req/min | stable |\n",
            60 + i * 10
        ));
    }
    s
}

/// Templated but advancing reasoning ("Let me reconsider…" with new content each time).
pub fn templated_reasoning() -> String {
    let mut s = String::new();
    let ideas = [
        (
            "a hash map keyed by user id",
            "lookups are O(1) but memory grows with every user ever seen",
        ),
        (
            "a sorted vector with binary search",
            "inserts cost O(n) which hurts at 10k writes per second",
        ),
        (
            "a B-tree map",
            "ordered iteration is free and inserts are O(log n)",
        ),
        (
            "an LRU cache in front of the database",
            "hit rates in the logs are only about 40 percent",
        ),
        (
            "sharding the map by tenant",
            "the largest tenant holds 70 percent of the keys",
        ),
        (
            "a bloom filter to skip misses",
            "false positives are fine because we verify against the store",
        ),
        (
            "batching writes every 50 ms",
            "latency budget is 200 ms so batching fits",
        ),
        (
            "moving the index to SQLite",
            "the deployment already ships SQLite for the audit log",
        ),
    ];
    for (i, (idea, why)) in ideas.iter().enumerate() {
        s.push_str(&format!(
            "Let me reconsider the storage question, approach {}: {idea}. The main consideration is that {why}.\n\
             Let me verify approach {} against the constraints: it has to survive a restart, and the test suite has {} cases touching it.\n\
             Double-checking the numbers for approach {}: with {} users the estimate is {} MB.\n\n",
            i + 1,
            i + 1,
            12 + i * 7,
            i + 1,
            1000 * (i + 1),
            3 * (i + 1) + 2
        ));
    }
    s
}

/// Trailing whitespace padding after an answer.
pub fn trailing_padding() -> String {
    let mut s = String::from("The migration finished and all 214 tests pass. The new column is nullable, so existing rows keep working.");
    s.push_str(&" ".repeat(150));
    s.push_str(&"\n".repeat(80));
    s.push_str(&" \n".repeat(60));
    s
}

/// A report with separator lines.
pub fn separator_lines() -> String {
    let mut s = String::new();
    for (i, title) in ["Summary", "Details", "Risks", "Next steps"]
        .iter()
        .enumerate()
    {
        s.push_str(&"=".repeat(72));
        s.push('\n');
        s.push_str(&format!("{title}\n"));
        s.push_str(&"=".repeat(72));
        s.push('\n');
        s.push_str(&format!(
            "Section {} text: the build on the release branch took {} minutes.\n",
            i + 1,
            10 + i
        ));
        s.push_str(&"─".repeat(80));
        s.push_str("\n\n");
    }
    s.push_str(&"-".repeat(200));
    s
}

/// Program output quoted with two identical adjacent lines (a corpus false positive of the
/// seed rule).
pub fn duplicate_output_lines() -> String {
    "Let's check output again.\n\n```\n************* Module foo\nfoo.py:1:0: C0104: Disallowed name \"foo\" (disallowed-name)\nfoo.py:1:0: C0104: Disallowed name \"foo\" (disallowed-name)\nfoo.py:2:0: C0104: Disallowed name \"bar\" (disallowed-name)\n```\n\nThis means `foo` and `bar` are still disallowed.\n".to_owned()
}

/// A sed substitution whose pattern and replacement share a long prefix.
pub fn sed_command() -> String {
    "I'll add `violation_error_code=None` to `__init__`.\n\n```bash\nsed -i '171s/violation_error_message=None,/violation_error_message=None, violation_error_code=None,/' django/db/models/constraints.py\n```".to_owned()
}

/// A supervision tree whose adjacent lines form an exact square across a shared prefix.
pub fn supervision_tree() -> String {
    "```\nSupervisor (one_for_one strategy)\n├── Phoenix.PubSub (name: Spotter.PubSub)\n├── Spotter.Services.SessionRegistry (GenServer)\n├── Spotter.Services.ReviewSessionRegistry (GenServer)\n├── Spotter.Services.ReviewTokenStore (GenServer)\n├── Spotter.Repo (Ecto database)\n└── Oban (background job processor)\n```\n".to_owned()
}

/// Several paragraphs of ordinary prose.
pub fn prose() -> String {
    [
        "The service starts by loading its configuration from the environment, falling back to the defaults in config/default.toml when a key is missing.",
        "Requests are authenticated with short-lived tokens; the middleware rejects expired tokens before any handler runs, which keeps the handlers simple.",
        "Persistence goes through a repository layer so that the tests can swap the Postgres pool for an in-memory store without touching business logic.",
        "Background jobs are queued in a separate table and picked up by a worker that polls every two seconds, backing off when the queue is empty.",
        "Finally, metrics are exported in the Prometheus format on a dedicated port, and the dashboards in ops/grafana read them directly.",
    ]
    .join("\n\n")
}

/// The §2.6 item 1 regression: ~23 long paragraphs of templated but advancing reasoning.
pub fn xhigh_thinking() -> String {
    let mut s = String::new();
    for i in 0..23 {
        s.push_str(&format!(
            "Approach {i}: treat the window as a deque of the last {} prices and keep the maximum at the front; each push pops smaller values from the back, so the total work is linear. \
             Let me verify approach {i}: for the input with {} elements the deque never holds more than {} entries, and the answer for window {} is {}. \
             Sliding window alternative {i}: recompute the maximum from scratch for each window, which costs {} comparisons in total, too slow beyond n = {}. \
             Double-checking approach {i}: the edge case k = {} returns the whole array maximum, {}.\n\n",
            i + 3,
            100 + i * 17,
            i + 3,
            i + 1,
            50 + i * 3,
            (100 + i * 17) * (i + 3),
            1000 * (i + 1),
            100 + i * 17,
            99 + i
        ));
    }
    s
}

/// A 143-character unit (the §2.6 item 5 runaway).
pub fn unit_143() -> String {
    let u = "I will now run git status to check the working tree, then commit the staged changes with a descriptive message, and push the branch to origin. ";
    assert_eq!(u.chars().count(), 143);
    u.to_owned()
}

/// About 1000 characters of one paragraph (the §2.6 item 6 runaway).
pub fn unit_1000() -> String {
    let mut u = String::new();
    let mut i = 0;
    while u.chars().count() < 1000 {
        u.push_str(&format!("Step {i}: open the handler, read the request body, validate the schema, and log the result. "));
        i += 1;
    }
    u.chars().take(1000).collect()
}

/// The §2.6 item 19 loop: 24 reworded variants of the same three intentions.
pub fn reworded_loop() -> String {
    let mut s = String::from(
        "I need to fix the memo table in the zigzag solver before running the tests again.\n\n",
    );
    let variants = [
        "Let me read the solve() signature end to see the return type.",
        "Let me read L1000-1035 to check the memo initialisation.",
        "Now let me add the zigzag memo right after the signature end.",
        "Let me read the signature end of solve() to see the return type.",
        "Let me read lines L1000-1035 again to check the memo initialisation.",
        "OK, let me add the zigzag memo after the signature end.",
    ];
    for i in 0..24 {
        s.push_str(variants[i % variants.len()]);
        s.push('\n');
    }
    s
}

/// §2.6 item 21: one results line and four "Let me clean up…" lines.
pub fn productive_with_repetitive_tail() -> String {
    "All 48 tests pass now: the parser handles nested tables, dotted keys, and inline arrays, and the fuzzer ran for ten minutes without a crash, covering every branch the coverage report lists for the lexer and the parser modules.\n\
     Let me clean up the temporary files in /tmp/parser-fuzz.\n\
     Let me clean up the debug prints in lexer.rs.\n\
     Let me clean up the unused imports in parser.rs.\n\
     Let me clean up the commented-out test in tests/tables.rs.\n"
        .to_owned()
}

// ---------------------------------------------------------------------------------------
// Legitimate shapes that repeat (regressions of the legitimate-text gate). Each is written
// for the project in the style of the real files it stands for.

/// A Rust test module whose assertions differ only in their arguments.
pub fn pairwise_assertions() -> String {
    let mut s = String::from(
        "//! Distance tests for the perceptual hash.\n\nuse super::{assert_sufficiently_different, hash_image, Image};\n\n#[test]\nfn three_unrelated_images_are_pairwise_distant() {\n    let a = hash_image(&Image::checkerboard(64));\n    let b = hash_image(&Image::gradient(64));\n    let c = hash_image(&Image::noise(64, 7));\n",
    );
    let names = ["a", "b", "c", "d", "e"];
    for (i, x) in names.iter().enumerate() {
        for y in names.iter().skip(i + 1) {
            s.push_str(&format!(
                "    assert_sufficiently_different({x}, {y}, 2);\n"
            ));
        }
    }
    s.push_str("}\n\n#[test]\nfn the_same_image_hashes_the_same() {\n    let a = hash_image(&Image::checkerboard(64));\n    assert_eq!(a, hash_image(&Image::checkerboard(64)));\n}\n");
    s
}

/// SIMD code extracting every byte lane, one call per line.
pub fn simd_extracts() -> String {
    let mut s = String::from(
        "#[cfg(target_arch = \"x86_64\")]\n#[target_feature(enable = \"avx2\")]\nunsafe fn lanes(v: __m256i) -> [u8; 32] {\n    use std::arch::x86_64::_mm256_extract_epi8;\n    [\n",
    );
    for i in 0..32 {
        s.push_str(&format!("        _mm256_extract_epi8(v, {i}) as u8,\n"));
    }
    s.push_str("    ]\n}\n");
    s
}

/// `impl PartialEq` blocks for every pair of string-like types.
pub fn partial_eq_impls() -> String {
    let mut s = String::from("use crate::SmolStr;\nuse std::borrow::Cow;\n\n");
    for (a, b) in [
        ("SmolStr", "str"),
        ("str", "SmolStr"),
        ("SmolStr", "&'a str"),
        ("&'a str", "SmolStr"),
        ("SmolStr", "String"),
        ("String", "SmolStr"),
        ("SmolStr", "Cow<'a, str>"),
        ("Cow<'a, str>", "SmolStr"),
    ] {
        let lt = if a.contains("'a") || b.contains("'a") {
            "<'a>"
        } else {
            ""
        };
        s.push_str(&format!(
            "impl{lt} PartialEq<{b}> for {a} {{\n    fn eq(&self, other: &{b}) -> bool {{\n        self.as_ref() == other.as_ref()\n    }}\n}}\n\n"
        ));
    }
    s
}

/// A Cargo.toml with a table per example.
pub fn example_tables() -> String {
    let mut s = String::from(
        "[package]\nname = \"plotters-demo\"\nversion = \"0.3.1\"\nedition = \"2021\"\n\n[dependencies]\nplotters = \"0.3\"\n\n",
    );
    for name in [
        "area-chart",
        "blit-bitmap",
        "boxplot",
        "chart",
        "console",
        "errorbar",
        "histogram",
        "mandelbrot",
        "matshow",
        "nested_coord",
        "normal-dist",
        "pie",
        "relative_size",
        "sierpinski",
        "slc-temp",
        "snowflake",
        "stock",
        "tick_control",
        "two-scales",
    ] {
        s.push_str(&format!(
            "[[example]]\nname = \"{name}\"\npath = \"examples/{name}.rs\"\nrequired-features = [\"bitmap_backend\"]\n\n"
        ));
    }
    s
}

/// A Python test quoting a FITS header card whose value is 65 `x` characters.
pub fn fits_card() -> String {
    format!(
        "import pytest\nfrom astropy.io import fits\n\n\ndef test_long_string_value_is_continued():\n    \"\"\"A 65-character string value does not fit one card and is continued.\"\"\"\n    header = fits.Header()\n    header[\"LONGSTR\"] = \"{x}\"\n    cards = header.cards\n    assert len(str(cards[0])) == 160\n    assert str(cards[0]).startswith(\"LONGSTR = '{short}&'\")\n    assert header[\"LONGSTR\"] == \"{x}\"\n\n\ndef test_blank_card_roundtrip():\n    card = fits.Card()\n    assert str(card) == \" \" * 80\n",
        x = "x".repeat(65),
        short = "x".repeat(67)
    )
}

/// A decimal test table with a repeating decimal of 64 digits.
pub fn repeating_decimal() -> String {
    format!(
        "from decimal import Decimal, getcontext\n\n\ndef test_division_keeps_the_context_precision():\n    getcontext().prec = 66\n    assert Decimal(232) / Decimal(3) == Decimal(\"77.{t}\")\n    assert Decimal(1) / Decimal(7) == Decimal(\"0.{s}\")\n",
        t = "3".repeat(64),
        s = "142857".repeat(10)
    )
}

/// A lexer state table: 256 zero entries per row.
pub fn state_table() -> String {
    let mut s = String::from("/// Next state for each byte, per state (0 = reject).\nstatic TRANSITIONS: [[u8; 256]; 3] = [\n");
    for row in 0..3 {
        s.push_str(&format!("    // state {row}\n    ["));
        for b in 0..256 {
            let v = if row == 1 && (b as u8).is_ascii_digit() {
                2
            } else {
                0
            };
            s.push_str(&format!("0x{v:02x}, "));
        }
        s.push_str("],\n");
    }
    s.push_str("];\n");
    s
}

/// Box-drawing rules and indentation runs in a CLI help text and a nested config dump.
pub fn rules_and_indentation() -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "┌{}┐\n│ loopguard status{}│\n├{}┤\n",
        "─".repeat(60),
        " ".repeat(44),
        "─".repeat(60)
    ));
    for (k, v) in [("sessions", "12"), ("findings", "3"), ("aborted", "0")] {
        s.push_str(&format!("│ {k:<20}{v:>38} │\n"));
    }
    s.push_str(&format!("└{}┘\n\n", "─".repeat(60)));
    for depth in 0..12 {
        s.push_str(&format!("{}level_{depth}:\n", "    ".repeat(depth)));
    }
    for depth in (0..12).rev() {
        s.push_str(&format!("{}end_{depth}\n", "\t".repeat(depth)));
    }
    s
}

/// An HTML review card with five identical star lines.
pub fn star_rating_card() -> String {
    let mut s = String::from(
        "<article class=\"review-card\">\n  <header>\n    <h3 class=\"review-card__title\">Excellent service</h3>\n    <div class=\"review-card__stars\" aria-label=\"5 out of 5\">\n",
    );
    for _ in 0..5 {
        s.push_str("      <span class=\"star star--filled\" aria-hidden=\"true\">star</span>\n");
    }
    s.push_str("    </div>\n  </header>\n  <p class=\"review-card__body\">The technician arrived on time and fixed the boiler in an hour.</p>\n</article>\n");
    s
}

/// Four identical macro calls in an array initialiser.
pub fn const_random_array() -> String {
    "use const_random::const_random;\n\n/// Seeds fixed at build time, different for every build.\nconst SEEDS: [u64; 4] = [\n    const_random!(u64),\n    const_random!(u64),\n    const_random!(u64),\n    const_random!(u64),\n];\n\npub fn seed(i: usize) -> u64 {\n    SEEDS[i % SEEDS.len()]\n}\n".to_owned()
}

/// A templated documentation page: one block per option, the same words around each name.
pub fn templated_page() -> String {
    let mut s = String::from("<!DOCTYPE html>\n<html lang=\"en\">\n<head><title>Options</title></head>\n<body>\n<h1>Options</h1>\n");
    for (name, ty, def) in [
        ("timeout", "integer", "30"),
        ("retries", "integer", "3"),
        ("verbose", "boolean", "false"),
        ("color", "string", "auto"),
        ("jobs", "integer", "4"),
        ("offline", "boolean", "false"),
    ] {
        s.push_str(&format!(
            "<section id=\"{name}\">\n  <h2>{name}</h2>\n  <p>Type: <code>{ty}</code>. Default: <code>{def}</code>.</p>\n  <p>Set it in the configuration file or on the command line with <code>--{name}</code>.</p>\n  <p>The command line wins over the configuration file.</p>\n</section>\n"
        ));
    }
    s.push_str("</body>\n</html>\n");
    s
}

/// A generated API page written on one line, as documentation generators minify it: a tuple
/// struct of four identical lanes renders the same link four times in a row.
pub fn one_line_api_page() -> String {
    let mut s = String::from(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1.0\"><title>Float32x2x4 in simd::lanes - Rust</title><link rel=\"stylesheet\" href=\"../../static.files/normalize.css\"><link rel=\"stylesheet\" href=\"../../static.files/rustdoc.css\"></head><body class=\"rustdoc struct\"><nav class=\"sidebar\"><div class=\"sidebar-crate\"><h2><a href=\"../../simd/index.html\">simd</a><span class=\"version\">0.4.2</span></h2></div><div class=\"sidebar-elems\"><section id=\"rustdoc-toc\"><h2 class=\"location\"><a href=\"#\">Float32x2x4</a></h2><h3><a href=\"#fields\">Tuple Fields</a></h3><ul class=\"block field\"><li><a href=\"#structfield.0\">0</a></li><li><a href=\"#structfield.1\">1</a></li><li><a href=\"#structfield.2\">2</a></li><li><a href=\"#structfield.3\">3</a></li></ul><h3><a href=\"#trait-implementations\">Trait Implementations</a></h3><ul class=\"block trait-implementation\"><li><a href=\"#impl-Clone-for-Float32x2x4\">Clone</a></li><li><a href=\"#impl-Copy-for-Float32x2x4\">Copy</a></li><li><a href=\"#impl-Debug-for-Float32x2x4\">Debug</a></li></ul></section></div></nav><main><div class=\"width-limiter\"><section id=\"main-content\" class=\"content\"><div class=\"main-heading\"><h1>Struct <span class=\"struct\">Float32x2x4</span></h1><span class=\"sub-heading\"><a class=\"src\" href=\"../../src/simd/lanes.rs.html#212-217\">Source</a></span></div><pre class=\"rust item-decl\"><code><div class=\"code-attribute\">#[repr(C)]</div>pub struct Float32x2x4(",
    );
    let lane = "pub <a class=\"struct\" href=\"struct.float32x2_t.html\" title=\"struct simd::lanes::float32x2_t\">float32x2_t</a>";
    s.push_str(&[lane; 4].join(", "));
    s.push_str(");</code></pre><details class=\"toggle top-doc\" open><summary class=\"hideme\"><span>Expand description</span></summary><div class=\"docblock\"><p>Four lanes loaded or stored together, in order.</p></div></details><h2 id=\"fields\" class=\"fields section-header\">Tuple Fields<a href=\"#fields\" class=\"anchor\">§</a></h2>");
    for i in 0..4 {
        s.push_str(&format!("<span id=\"structfield.{i}\" class=\"structfield section-header\"><a href=\"#structfield.{i}\" class=\"anchor field\">§</a><code>{i}: <a class=\"struct\" href=\"struct.Lane.html\" title=\"struct simd::lanes::Lane\">Lane</a></code></span>"));
    }
    s.push_str("</section></div></main></body></html>");
    s
}

/// The shapes of [`repetitive_legitimate`] that hold real sentences among their code,
/// markup or fields (comment paragraphs, a mail's header fields, a compiler's closing
/// "For more information about this error, …", an answer around declarations): a test that
/// every line of a shape is code cannot ask it of these.
pub const MIXES_PROSE: &[&str] = &[
    "repeated_doc_comments",
    "delivery_status_report",
    "repeated_compiler_errors",
    "diagnostics_with_gutters",
    "declarations_in_an_answer",
];

/// Every legitimate shape above, by name.
pub fn repetitive_legitimate() -> Vec<(&'static str, String)> {
    vec![
        ("pairwise_assertions", pairwise_assertions()),
        ("simd_extracts", simd_extracts()),
        ("partial_eq_impls", partial_eq_impls()),
        ("example_tables", example_tables()),
        ("fits_card", fits_card()),
        ("repeating_decimal", repeating_decimal()),
        ("state_table", state_table()),
        ("rules_and_indentation", rules_and_indentation()),
        ("star_rating_card", star_rating_card()),
        ("const_random_array", const_random_array()),
        ("templated_page", templated_page()),
        ("numbered_typedefs", numbered_typedefs()),
        ("test_log_of_paths", test_log_of_paths()),
        ("tab_separated_aliases", tab_separated_aliases()),
        ("syntax_keyword_lists", syntax_keyword_lists()),
        ("indented_numbered_regions", indented_numbered_regions()),
        ("named_sequences", named_sequences()),
        ("repeated_doc_comments", repeated_doc_comments()),
        ("manual_page_index", manual_page_index()),
        ("font_hex_trailer", font_hex_trailer()),
        ("delivery_status_report", delivery_status_report()),
        ("one_line_api_page", one_line_api_page()),
        ("numbered_declarations", numbered_declarations()),
        ("declarations_in_an_answer", declarations_in_an_answer()),
        ("generated_signature_table", generated_signature_table()),
        ("javadoc_flag_table", javadoc_flag_table()),
        ("generated_width_table", generated_width_table()),
        ("repeated_compiler_errors", repeated_compiler_errors()),
        ("diagnostics_with_gutters", diagnostics_with_gutters()),
        ("packed_search_index", packed_search_index()),
        ("source_map_mappings", source_map_mappings()),
        ("minified_code_page_tables", minified_code_page_tables()),
    ]
}

/// A documentation generator's packed search index, one line of script: the descriptions of
/// items, each led by a two-letter length code, with digits that pack the items without a
/// description between them. Where a module's hundreds of items have none, the line holds a
/// run of hundreds of `0`s, right after a sentence (`… <code>From</code>.000…`), thousands of
/// characters into the line.
pub fn packed_search_index() -> String {
    let descriptions = [
        "Returns the number of elements in the vector, also referred to as its \\u2026",
        "Creates an owned <code>PathBuf</code> with <code>path</code> adjoined to <code>self</code>.",
        "Multiply packed single-precision (32-bit) floating-point \\u2026",
        "Converts this type into the (usually inferred) input type.",
        "Calls <code>U::from(self)</code>.",
        "Returns the argument unchanged.",
        "Compute the type information of a concrete type. It can \\u2026",
        "Data is expected to be reused very soon.",
    ];
    let mut s = String::from("rd_(\"");
    let mut g = 0x2545_f491_4f6c_dd1du64;
    while s.len() < 9_000 {
        g ^= g << 13;
        g ^= g >> 7;
        g ^= g << 17;
        let d = descriptions[(g % descriptions.len() as u64) as usize];
        let code = [b'B' + (d.len() / 26 % 4) as u8, b'a' + (d.len() % 26) as u8];
        s.push_str(std::str::from_utf8(&code).unwrap_or("Ba"));
        s.push_str(d);
        s.push_str(&"0".repeat((g >> 20) as usize % 4));
    }
    s.push_str("CkConverts this type into the (usually inferred) input type.");
    s.push_str(&"0".repeat(544));
    s.push_str("BaCalls <code>U::from(self)</code>.11111\")\n");
    s
}

/// A bundler's source map: one line of JSON whose `mappings` string encodes, for a long
/// stretch of generated code that repeats the same statement shape, the same segment
/// (`EACA;AAAA,`) 270 times.
pub fn source_map_mappings() -> String {
    let mut s = String::from(
        "{\"version\":3,\"file\":\"index.js\",\"sources\":[\"../src/compose-paginate.ts\",\"../src/iterator.ts\",\"../src/paginate.ts\",\"../src/generated/paginating-endpoints.ts\"],\"names\":[],\"mappings\":\"",
    );
    let segments = [
        "AAAA", "AACA", "EACA", "IAAI", "CAAC", "GAAG", "AAAE", "KAAK", "EAAE",
    ];
    let mut g = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..600 {
        g ^= g << 13;
        g ^= g >> 7;
        g ^= g << 17;
        let n = 1 + (g % 5) as usize;
        for k in 0..n {
            s.push_str(segments[((g >> (8 * k)) % segments.len() as u64) as usize]);
            s.push(if k + 1 == n { ';' } else { ',' });
        }
    }
    s.push_str(&"EACA;AAAA,".repeat(270));
    s.push_str("EACA;AACF;;AAC/B,CAAC;AACD,EAAE\"}\n");
    s
}

/// A minified module of single-byte code pages: one line of script where, thousands of
/// characters in, the tables of nine code pages that share their characters (Mac Roman and
/// its aliases) are written out one after another: the same 700-character string nine times.
pub fn minified_code_page_tables() -> String {
    let mut s = String::from("\"use strict\";var names=[");
    let mut g = 0x2545_f491_4f6c_dd1du64;
    let table = |len: usize, g: &mut u64| {
        let mut t = String::from("\"");
        while t.chars().count() < len - 2 {
            *g ^= *g << 13;
            *g ^= *g >> 7;
            *g ^= *g << 17;
            t.push(char::from_u32(0xa0 + (*g % 0x160) as u32).unwrap_or('?'));
        }
        t.push_str("\",");
        t
    };
    let mut tables = String::new();
    for i in 0..40 {
        s.push_str(&format!("\"cp{}\",", 1250 + i));
        tables.push_str(&table(128, &mut g));
    }
    let shared = table(700, &mut g);
    for name in [
        "mac",
        "macroman",
        "x-mac-roman",
        "macintosh",
        "csmacintosh",
        "mac-roman",
        "xmacroman",
        "maclatin",
        "applemac",
    ] {
        s.push_str(&format!("\"{name}\","));
        tables.push_str(&shared);
    }
    s.push_str("];var tables=[");
    s.push_str(&tables);
    s.push_str("\"\"];module.exports=function(n){return tables[names.indexOf(n)]};\n");
    s
}

/// A compiler's expected output for a UI test of a macro: the compiler reports the same
/// error once per expansion it checks, so one 420-character diagnostic is written out four
/// times and a half (the last one cut by a different help line), as such files hold.
pub fn repeated_compiler_errors() -> String {
    let block = "error[E0308]: mismatched types\n  --> $DIR/cast_slice.rs:14:26\n   |\n14 |     let _: &mut [u16] = cast_slice!(&[0u8; 4]);\n   |                         ^^^^^^^^^^^^^^^^^^^^^^ types differ in mutability\n   |\n   = note: expected mutable reference `&mut [u16]`\n                      found reference `&_`\n   = note: this error originates in the macro `cast_slice` (in Nightly builds, run with -Z macro-backtrace for more info)\n\n";
    format!(
        "{}error[E0308]: mismatched types\n  --> $DIR/cast_slice.rs:14:26\n   |\n14 |     let _: &mut [u16] = cast_slice!(&[0u8; 4]);\n   |                         ^^^^^^^^^^^^^^^^^^^^^^ expected `&mut [u16]`, found `&[u16]`\n\nerror: aborting due to 5 previous errors\n\nFor more information about this error, try `rustc --explain E0308`.\n",
        block.repeat(4)
    )
}

/// A compiler's expected output whose errors are mostly gutter lines (`   |`, a caret line,
/// labels under the code) and notes: an error with its help first, then one error written
/// three times, once per expansion checked. The gutter lines are not sentences.
pub fn diagnostics_with_gutters() -> String {
    let first = "error[E0308]: mismatched types\n  --> $DIR/view_bytes.rs:41:44\n   |\n41 | const SRC_NOT_A_REFERENCE: &u8 = view_bytes!(0usize);\n   |                                  ------------^^^^^^-\n   |                                  |           |\n   |                                  |           expected reference, found `usize`\n   |                                  |           help: consider borrowing here: `&0usize`\n   |                                  expected due to this\n   |\n   = note: expected reference `&_`\n                   found type `usize`\n\n";
    let block = "error[E0308]: mismatched types\n  --> $DIR/view_bytes.rs:47:37\n   |\n47 | const DST_NOT_A_REFERENCE: usize = view_bytes!(&0u8);\n   |                                    ^^^^^^^^^^^^^^^^^ expected `usize`, found reference\n   |\n   = note:   expected type `usize`\n           found reference `&_`\n   = note: this error originates in the macro `view_bytes` (in Nightly builds, run with -Z macro-backtrace for more info)\n\n";
    format!(
        "{first}{}error: aborting due to 4 previous errors\n\nFor more information about this error, try `rustc --explain E0308`.\n",
        block.repeat(3)
    )
}

/// A generated script module: a header of `#` comments (bare `#` lines between them, a
/// `#!` line first), then a character width table whose rows repeat where a run of
/// characters shares a width (four rows of zeros for the control characters). The comments
/// are lines of the file being written, not prose.
pub fn generated_width_table() -> String {
    let mut s = String::from(
        "#!/usr/bin/env perl\n# Character widths for Report Mono\n#\n# Generated by make_widths from the font's metrics file.\n#\n# Do not edit: run make_widths again.\n#\n\npackage Report::Widths::Mono;\n\n# Width of each character of iso-8859-1, in ems\n@widths = (\n",
    );
    let row = |w: [&str; 8]| {
        let mut r = String::from(" ");
        for v in w {
            r.push_str(&format!("{:<7}", format!("{v},")));
        }
        r.push('\n');
        r
    };
    for _ in 0..4 {
        s.push_str(&row(["0"; 8]));
    }
    for _ in 0..3 {
        s.push_str(&row(["0.6"; 8]));
    }
    s.push_str(&row(["0.6", "0", "0.6", "0.6", "0", "0.6", "0.6", "0.6"]));
    s.push_str(");\n\nsub width { $widths[ord($_[0])] }\n\n1;\n");
    s
}

/// A Java source file that opens with its documentation: a javadoc comment holding an HTML
/// table whose cells repeat (`<td …> y` for every flag a conversion accepts). The comment's
/// ` * ` lines are lines of the file being written, not prose.
pub fn javadoc_flag_table() -> String {
    let mut s = String::from(
        "/*\n * Copyright (c) 2024, the report-writer authors.\n * Licensed under the Apache License, Version 2.0.\n */\n\n/**\n * Formats the values of a report row.\n *\n * <p> The flags each conversion accepts:\n *\n * <table class=\"striped\">\n * <caption style=\"display:none\">Flags</caption>\n * <thead>\n * <tr><th scope=\"col\"> Flag <th scope=\"col\"> Text <th scope=\"col\"> Integral\n *     <th scope=\"col\"> Decimal <th scope=\"col\"> Date <th scope=\"col\"> Description\n * </thead>\n * <tbody>\n",
    );
    for (flag, what) in [
        ("'-'", "The result is left-justified."),
        ("'#'", "The result uses an alternate form."),
        ("'+'", "The result always includes a sign."),
        ("'0'", "The result is zero-padded."),
    ] {
        s.push_str(&format!(
            " * <tr><th scope=\"row\"> {flag} <td style=\"text-align:center; vertical-align:top\"> y\n"
        ));
        for _ in 0..4 {
            s.push_str(" *     <td style=\"text-align:center; vertical-align:top\"> y\n");
        }
        s.push_str(&format!(
            " *     <td style=\"text-align:left; vertical-align:top\"> {what}\n"
        ));
    }
    s.push_str(" * </tbody>\n * </table>\n */\npublic final class RowFormatter {\n    private RowFormatter() {}\n}\n");
    s
}

/// A graphics API header: mostly `#define` lines, then function declarations whose names
/// differ in their numbers only (with numbers masked, copies of one line).
pub fn numbered_declarations() -> String {
    let mut s = String::from("#ifndef LG_VERSION_4_1\n#define LG_VERSION_4_1 1\n");
    for (i, name) in LG_TOKENS.iter().enumerate() {
        s.push_str(&format!("#define {name} 0x{:04X}\n", 0x8DF8 + 3 * i));
    }
    s.push_str(&lg_matrix_declarations());
    s.push_str("#endif /* LG_VERSION_4_1 */\n");
    s
}

/// The same API explained in an answer: the tokens as a list of bullets, then the
/// declarations written out without a fence, so the message reads as prose. With numbers
/// masked the declarations are copies of one line, but each is a statement ending on `;`,
/// not a sentence of a counter loop.
pub fn declarations_in_an_answer() -> String {
    let mut s = String::from("Version 4.1 of the header adds these tokens:\n\n");
    for (i, name) in LG_TOKENS.iter().enumerate() {
        s.push_str(&format!("- `{name}`: 0x{:04X}\n", 0x8DF8 + 3 * i));
    }
    s.push_str("\nAnd one entry point per matrix shape and element type:\n\n");
    s.push_str(&lg_matrix_declarations());
    s.push_str("\nEach takes the program explicitly, so no program has to be bound first.\n");
    s
}

/// The tokens of [`numbered_declarations`] and [`declarations_in_an_answer`].
const LG_TOKENS: [&str; 15] = [
    "LG_SHADER_BINARY_FORMATS",
    "LG_NUM_SHADER_BINARY_FORMATS",
    "LG_MAX_VERTEX_UNIFORM_VECTORS",
    "LG_MAX_VARYING_VECTORS",
    "LG_MAX_FRAGMENT_UNIFORM_VECTORS",
    "LG_PROGRAM_BINARY_RETRIEVABLE_HINT",
    "LG_PROGRAM_BINARY_LENGTH",
    "LG_NUM_PROGRAM_BINARY_FORMATS",
    "LG_PROGRAM_BINARY_FORMATS",
    "LG_VERTEX_SHADER_BIT",
    "LG_FRAGMENT_SHADER_BIT",
    "LG_GEOMETRY_SHADER_BIT",
    "LG_PROGRAM_SEPARABLE",
    "LG_ACTIVE_PROGRAM",
    "LG_PROGRAM_PIPELINE_BINDING",
];

/// Twelve declarations whose names differ in their numbers and element type only.
fn lg_matrix_declarations() -> String {
    let mut s = String::new();
    for (kind, ty) in [("fv", "LGfloat"), ("dv", "LGdouble")] {
        for (r, c) in [(2, 3), (3, 2), (2, 4), (4, 2), (3, 4), (4, 3)] {
            s.push_str(&format!(
                "LGAPI void LGAPIENTRY lgProgramUniformMatrix{r}x{c}{kind} (LGuint program, LGint location, LGsizei count, LGboolean transpose, const {ty} *value);\n"
            ));
        }
    }
    s
}

/// A generated C table of intrinsic signatures: rows of encoded type ids, one row repeated
/// ten times where ten intrinsics share a signature (1,440 characters of exact repetition
/// with a 144-character root, as table generators write).
pub fn generated_signature_table() -> String {
    let row = |a: u32, b: u32, c: u32| {
        format!(
            "  (1U<<31) | {a}, (1U<<31) | {b}, (1U<<31) | {c}, (1U<<31) | {b}, (1U<<31) | {b}, (1U<<31) | {a}, (1U<<31) | {c}, (1U<<31) | {b},\n"
        )
    };
    let mut s = String::from(
        "// Global intrinsic function declaration type table.\n#ifdef GET_INTRINSIC_GENERATOR_GLOBAL\nstatic const unsigned IIT_Table[] = {\n",
    );
    for (a, b, c) in [(4522, 4594, 4666), (4511, 4581, 4651), (4748, 4666, 4594)] {
        s.push_str(&row(a, b, c));
    }
    for _ in 0..10 {
        s.push_str(&row(4581, 4651, 4731));
    }
    for (a, b, c) in [(4833, 4902, 4977), (4511, 4522, 4594)] {
        s.push_str(&row(a, b, c));
    }
    s.push_str("  0\n};\n#endif\n");
    s
}

/// A mail server's delivery status report: one block of `Key: value` fields per recipient,
/// identical where the recipients' masked addresses are.
pub fn delivery_status_report() -> String {
    let mut s = String::from(
        "From: MAILER-DAEMON@mail.example.org\nSubject: Undelivered Mail Returned to Sender\nContent-Type: message/delivery-status\n\nReporting-MTA: dns; mail.example.org\nArrival-Date: Fri, 26 Nov 2004 19:41:40 -0800 (PST)\n\n",
    );
    for who in [
        "xxxxxxxx",
        "xxxxxx",
        "xxxxxx",
        "xxxxxx",
        "xxxxxx",
        "xxxxxxxxxxxx",
    ] {
        s.push_str(&format!(
            "Final-Recipient: rfc822; {who}@dept.example.gov\nAction: failed\nStatus: 5.7.1\nDiagnostic-Code: smtp; 550 5.7.1 Message content rejected, id=01956-02-2 - BANNED: report.bat\nLast-Attempt-Date: Fri, 26 Nov 2004 19:41:44 -0800 (PST)\n\n"
        ));
    }
    s
}

/// An embedded Type 1 font as PostScript carries it: a few commands, hex-encoded data in
/// lines of 64 digits, then the format's trailer of eight lines of 64 zeros.
pub fn font_hex_trailer() -> String {
    let mut s = String::from(
        "%%BeginFont: CMR10\n%!PS-AdobeFont-1.0: CMR10 003.002\n/FontName /CMR10 def\ncurrentfile eexec\n",
    );
    let mut g = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..24 {
        for _ in 0..64 {
            g ^= g << 13;
            g ^= g >> 7;
            g ^= g << 17;
            s.push(char::from(b"0123456789ABCDEF"[(g % 16) as usize]));
        }
        s.push('\n');
    }
    s.push_str("C27D43128892CB5D14A32F\n");
    for _ in 0..8 {
        s.push_str(&"0".repeat(64));
        s.push('\n');
    }
    s.push_str("cleartomark\n{restore}if\n%%EndFont\n");
    s
}

/// A manual page's index in troff: each entry a bold name, then a dash and a summary that
/// many entries share.
pub fn manual_page_index() -> String {
    let mut s = String::from(".TH \"INDEX\" 7\n.SH \"ENTRIES\"\n.PP\n");
    let summaries = [
        "Track bus peers",
        "Add, remove and retrieve bus peers tracked in a bus peer tracking object",
        "Define the callback function for resource cleanup",
    ];
    for (i, name) in [
        "get_bus",
        "get_destroy_callback",
        "get_recursive",
        "get_userdata",
        "new",
        "next",
        "ref",
        "remove_name",
        "remove_sender",
        "set_destroy_callback",
        "set_recursive",
        "set_userdata",
        "unref",
        "unrefp",
    ]
    .iter()
    .enumerate()
    {
        s.push_str(&format!(
            "\\fBbus_track_{name}\\fR(3)\n\\(em {}\n.br\n",
            summaries[(i * 7 / 3) % 3]
        ));
    }
    s
}

/// A C header's function-pointer typedefs whose names differ in a number (the copies
/// differ in their numbers only, as a counter loop's do, but they are declarations).
pub fn numbered_typedefs() -> String {
    let mut s = String::from("/* Uniform setters, generated. */\n");
    for (r, c) in [
        (2, 3),
        (3, 2),
        (2, 4),
        (4, 2),
        (3, 4),
        (4, 3),
        (2, 2),
        (3, 3),
        (4, 4),
    ] {
        s.push_str(&format!(
            "typedef void (APIENTRYP PFNUNIFORMMATRIX{r}X{c}PROC) (GLint location, GLsizei count, GLboolean transpose, const GLfloat *value);\n"
        ));
    }
    for i in 1..=9 {
        s.push_str(&format!("    extern const _Slot<{i}> _{i};\n"));
    }
    s
}

/// A test run's log: one line per test, a status and the test's path with its number.
pub fn test_log_of_paths() -> String {
    let mut s = String::from("== test results: parser suite ==\n\n");
    for (i, n) in [
        6311448u32, 6175602, 6384805, 6465722, 6467808, 6490380, 6490921, 6513892, 6540545,
        6551616, 6559595, 6537167, 6564400, 6573786,
    ]
    .iter()
    .enumerate()
    {
        let dir = if i % 2 == 0 { "transform" } else { "parsers" };
        s.push_str(&format!(
            "Passed: xml/parser/unittest/{dir}/Issue{n}.java\n"
        ));
        s.push_str(&format!("Passed: tools/compiler/{n}/T{n}.java\n"));
    }
    s
}

/// A table of code points and their aliases, tab-separated, as character databases keep.
pub fn tab_separated_aliases() -> String {
    let mut s = String::from("# Aliases of the variation selectors\n");
    for i in 0..16 {
        s.push_str(&format!("FE{i:02X}\t\tVS{}: abbreviation\n", i + 1));
    }
    s
}

/// An editor's syntax file: keyword lists whose lines differ in one name or number.
pub fn syntax_keyword_lists() -> String {
    let mut s = String::from("\" Constants of the report language\n");
    for name in [
        "BUTTON1",
        "BUTTON1MASK",
        "BUTTON2",
        "BUTTON2MASK",
        "BUTTON3",
        "BUTTON3MASK",
        "BUTTONPRESS",
        "BUTTONMOTION",
        "CHECKED",
    ] {
        s.push_str(&format!("syn keyword reportConstant EVT{name}\n"));
    }
    for i in 0..8 {
        s.push_str(&format!("syn keyword reportConstant USER.{i}\n"));
    }
    for spec in ["%ps", "%pp", "%po", "%q", "%r", "%v", "%x", "%z"] {
        s.push_str(&format!("syn match reportFormat \"{spec}\" contained\n"));
    }
    for group in ["MapProp", "MapMethod", "SetProp", "SetMethod"] {
        s.push_str(&format!(
            "  syntax cluster props add=report{group}\n  hi def link report{group} Keyword\n"
        ));
    }
    s
}

/// Nested regions of a syntax file, indented, each naming the next by number.
pub fn indented_numbered_regions() -> String {
    let mut s = String::from("if exists(\"g:report_rainbow\")\n");
    for i in 0..10 {
        s.push_str(&format!(
            "    syn region reportParen{i} contained matchgroup=level{i} start=\"(\" end=\")\" contains=@reportList,reportParen{}\n",
            i + 1
        ));
    }
    s.push_str("endif\n");
    s
}

/// Named character sequences: capital names, a semicolon, code points in hex.
pub fn named_sequences() -> String {
    let mut s = String::from("# Named sequences\n\n");
    for (cons, base) in [
        ("K", 0x0B95u32),
        ("NG", 0x0B99),
        ("C", 0x0B9A),
        ("LLL", 0x0BB4),
        ("LL", 0x0BB3),
    ] {
        for (vowel, sign) in [
            ("AA", 0x0BBEu32),
            ("I", 0x0BBF),
            ("II", 0x0BC0),
            ("U", 0x0BC1),
            ("UU", 0x0BC2),
            ("E", 0x0BC6),
            ("EE", 0x0BC7),
            ("AI", 0x0BC8),
        ] {
            s.push_str(&format!(
                "TAMIL SYLLABLE {cons}{vowel}; {base:04X} {sign:04X}\n"
            ));
        }
        s.push('\n');
    }
    s
}

/// A header whose functions share one hard-wrapped comment paragraph, repeated above each
/// declaration.
pub fn repeated_doc_comments() -> String {
    let mut s = String::from("#include <features.h>\n\n");
    for (what, decl) in [
        (
            "Return next entry from the database.",
            "extern struct grp_entry *get_grp_entry (void);",
        ),
        (
            "Get the entry matching NAME.",
            "extern struct grp_entry *get_grp_by_name (const char *__name);",
        ),
        (
            "Read an entry from STRING.",
            "extern struct grp_entry *parse_grp_entry (const char *__string);",
        ),
        (
            "Read the next entry from STREAM.",
            "extern struct grp_entry *read_grp_entry (FILE *__stream);",
        ),
        (
            "Write the entry to STREAM.",
            "extern int write_grp_entry (const struct grp_entry *__g, FILE *__stream);",
        ),
        (
            "Reentrant version of the lookup by name.",
            "extern int get_grp_by_name_r (const char *__name, struct grp_entry *__result_buf);",
        ),
    ] {
        s.push_str(&format!(
            "/* {what}\n\n   This function is not part of POSIX and therefore no official\n   cancellation point.  But due to similarity with a POSIX interface\n   or due to the implementation it is a cancellation point and\n   therefore not marked with __THROW.  */\n{decl}\n\n"
        ));
    }
    s
}

// ---------------------------------------------------------------------------------------
// Runaways.

/// A 92-line block of code (about 3,300 characters) that a model writes, then repeats.
pub fn block_92_lines() -> String {
    let mut s = String::from("```python\n");
    for i in 0..92 {
        s.push_str(&match i % 4 {
            0 => format!("def handler_{i}(request):\n"),
            1 => format!("    payload = parse(request.body, schema=SCHEMA_{i})\n"),
            2 => format!("    log.info(\"handled %s\", payload.get(\"id\", {i}))\n"),
            _ => format!("    return respond(payload, status=200 + {})\n", i % 7),
        });
    }
    s
}

/// A two-line thought (about 146 characters) a model repeats.
pub fn thought_2_lines() -> String {
    "Wait, I need to re-check whether the cache is invalidated before the write.\nLet me look at the invalidate() call in store.rs once more to be sure.\n".to_owned()
}

/// A loop whose copies differ a little: a paragraph repeated with a counter and a clock
/// that advance (the copies differ in their numbers only).
pub fn noisy_loop(copies: usize) -> String {
    let mut s = String::from("I'll retry the deployment until the health check passes.\n\n");
    for i in 0..copies {
        s.push_str(&format!(
            "Attempt {}: at 12:{:02}:{:02} the health check on port 8080 still returns 503, so I will restart the service again and wait thirty seconds before checking the endpoint.\n",
            i + 1,
            (i * 31 / 60) % 60,
            (i * 31) % 60
        ));
    }
    s
}

/// A Python module of small functions with their docstrings, as lines: 6 verbs × 7 nouns
/// (`load_settings`, `parse_header`, …), each function 7 lines with its blank line, after a
/// 4-line header. Windows over it that start a few lines apart share most of their lines.
pub fn settings_module_lines() -> Vec<String> {
    const NAMES: [&str; 6] = ["load", "parse", "merge", "check", "render", "flush"];
    const WHAT: [&str; 7] = [
        "settings", "header", "section", "entry", "table", "cache", "queue",
    ];
    let mut lines = vec![
        "\"\"\"Reading and checking the service's settings.\"\"\"".to_owned(),
        "import json".to_owned(),
        "import os".to_owned(),
        String::new(),
    ];
    for what in WHAT {
        for name in NAMES {
            lines.push(format!("def {name}_{what}(source, strict=False):"));
            lines.push(format!(
                "    \"\"\"Return the {what} read by {name}, or None.\"\"\""
            ));
            lines.push(format!("    value = source.get({what:?})"));
            lines.push("    if value is None and strict:".to_owned());
            lines.push(format!("        raise KeyError({what:?})"));
            lines.push(format!("    return {name}_value(value)"));
            lines.push(String::new());
        }
    }
    lines
}

/// The doc blocks of a byte buffer's getters, one per width, byte order and sign (330
/// lines): pages of it share most of their lines one by one (the same sentences), not runs
/// of consecutive lines.
pub fn getter_doc_lines() -> Vec<String> {
    let mut lines = Vec::new();
    for bits in [8, 16, 32, 64, 128] {
        for (order, suffix) in [
            ("big-endian", ""),
            ("little-endian", "_le"),
            ("native-endian", "_ne"),
        ] {
            for (sign, t) in [("unsigned", "u"), ("signed", "i")] {
                lines.push(format!(
                    "    /// Gets an {sign} {bits} bit integer from `self` in {order} byte order."
                ));
                lines.push("    ///".to_owned());
                lines.push(format!(
                    "    /// The current position is advanced by {}.",
                    bits / 8
                ));
                lines.push("    ///".to_owned());
                lines.push("    /// # Panics".to_owned());
                lines.push("    ///".to_owned());
                lines.push(
                    "    /// This function panics if there is not enough remaining data in `self`."
                        .to_owned(),
                );
                lines.push(format!(
                    "    fn get_{t}{bits}{suffix}(&mut self) -> {t}{bits} {{"
                ));
                lines.push(format!(
                    "        buf_get_impl!(self, {t}{bits}::from_{}_bytes)",
                    &order[..2]
                ));
                lines.push("    }".to_owned());
                lines.push(String::new());
            }
        }
    }
    lines
}
