//! The `keyscene` command-line tool.

fn main() {
    println!("keyscene");
}
