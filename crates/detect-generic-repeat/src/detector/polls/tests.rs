//! Which shell commands are polls.

use crate::testutil::*;

#[test]
fn only_the_first_line_of_a_command_can_make_it_a_poll() {
    use super::is_polling_command;
    assert!(is_polling_command(
        &json!({"command": "sleep 5 && curl -s localhost:8080/health"})
    ));
    assert!(is_polling_command(
        &json!({"command": "cd app; git status"})
    ));
    assert!(is_polling_command(&json!({"cmd": "./status"})));
    assert!(!is_polling_command(
        &json!({"command": "edit 10:20\n    return node.get(key);\n"})
    ));
    assert!(!is_polling_command(
        &json!({"command": "python replicate_bug.py"})
    ));
    assert!(!is_polling_command(&json!({"path": "status.txt"})));
}
