//! Frame labels on rendered images (contact-sheet cells, issue 15 §3): a 5×7-pixel bitmap font
//! of the characters a frame number needs, white on a black box so it reads on any picture.

use super::Image;

/// Glyph rows, top to bottom, 5 bits each (bit 4 is the leftmost pixel).
fn glyph(c: char) -> Option<[u8; 7]> {
    Some(match c {
        '0' => [0b01110, 0b10001, 0b10011, 0b10101, 0b11001, 0b10001, 0b01110],
        '1' => [0b00100, 0b01100, 0b00100, 0b00100, 0b00100, 0b00100, 0b01110],
        '2' => [0b01110, 0b10001, 0b00001, 0b00010, 0b00100, 0b01000, 0b11111],
        '3' => [0b11111, 0b00010, 0b00100, 0b00010, 0b00001, 0b10001, 0b01110],
        '4' => [0b00010, 0b00110, 0b01010, 0b10010, 0b11111, 0b00010, 0b00010],
        '5' => [0b11111, 0b10000, 0b11110, 0b00001, 0b00001, 0b10001, 0b01110],
        '6' => [0b00110, 0b01000, 0b10000, 0b11110, 0b10001, 0b10001, 0b01110],
        '7' => [0b11111, 0b00001, 0b00010, 0b00100, 0b01000, 0b01000, 0b01000],
        '8' => [0b01110, 0b10001, 0b10001, 0b01110, 0b10001, 0b10001, 0b01110],
        '9' => [0b01110, 0b10001, 0b10001, 0b01111, 0b00001, 0b00010, 0b01100],
        '.' => [0, 0, 0, 0, 0, 0b01100, 0b01100],
        '-' => [0, 0, 0, 0b11111, 0, 0, 0],
        ' ' => [0; 7],
        _ => return None,
    })
}

/// The label's colours: glyph pixels and the box behind them.
const INK: [u8; 3] = [255, 255, 255];
const BOX: [u8; 3] = [0, 0, 0];

impl Image {
    /// Draws `text` with its box's top-left corner at `(x, y)`, each font pixel `scale × scale`
    /// image pixels (at least 1): a black box one font pixel wider than the glyphs on every
    /// side, white glyphs 5×7 font pixels with one between characters. Characters other than
    /// digits, `.`, `-` and space are drawn as spaces; what falls outside the image is clipped.
    pub fn draw_label(&mut self, text: &str, x: u32, y: u32, scale: u32) {
        let scale = scale.max(1);
        let n = text.chars().count() as u32;
        let (w, h) = ((6 * n + 1) * scale, 9 * scale);
        self.fill_rect(x, y, w, h, BOX);
        for (k, c) in text.chars().enumerate() {
            let rows = glyph(c).unwrap_or([0; 7]);
            for (r, bits) in rows.iter().enumerate() {
                for col in 0..5u32 {
                    if bits & (0b10000 >> col) != 0 {
                        let px = x + (1 + 6 * k as u32 + col) * scale;
                        let py = y + (1 + r as u32) * scale;
                        self.fill_rect(px, py, scale, scale, INK);
                    }
                }
            }
        }
    }

    /// Fills the `w × h` rectangle at `(x, y)` with `color`, clipped to the image.
    fn fill_rect(&mut self, x: u32, y: u32, w: u32, h: u32, color: [u8; 3]) {
        let x1 = x.saturating_add(w).min(self.width);
        let y1 = y.saturating_add(h).min(self.height);
        for py in y.min(y1)..y1 {
            for px in x.min(x1)..x1 {
                let i = (py as usize * self.width as usize + px as usize) * 3;
                self.rgb[i..i + 3].copy_from_slice(&color);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The picture of "1-" drawn at (1, 1), scale 1, in a 15×11 grey image, drawn by hand from
    /// the rule (box 6 × 2 + 1 = 13 by 9 pixels, glyphs from one pixel in): `#` white, `o` the
    /// black box, `.` the grey left untouched.
    const ONE_MINUS: [&str; 11] = [
        "...............",
        ".ooooooooooooo.",
        ".ooo#ooooooooo.",
        ".oo##ooooooooo.",
        ".ooo#ooooooooo.",
        ".ooo#ooo#####o.",
        ".ooo#ooooooooo.",
        ".ooo#ooooooooo.",
        ".oo###oooooooo.",
        ".ooooooooooooo.",
        "...............",
    ];

    #[test]
    fn a_label_is_white_glyphs_in_a_black_box() {
        let mut img = Image::filled(15, 11, [50, 50, 50]);
        img.draw_label("1-", 1, 1, 1);
        for (y, row) in ONE_MINUS.iter().enumerate() {
            let got: String = (0..15)
                .map(|x| match &img.rgb[(y * 15 + x) * 3..][..3] {
                    [255, 255, 255] => '#',
                    [0, 0, 0] => 'o',
                    [50, 50, 50] => '.',
                    _ => '?',
                })
                .collect();
            assert_eq!(got, *row, "row {y}");
        }
    }

    #[test]
    fn a_label_past_the_edge_is_clipped_not_a_panic() {
        let mut img = Image::filled(4, 4, [9, 9, 9]);
        img.draw_label("888", 2, 2, 3);
        img.draw_label("0", 100, 100, 1);
        assert_eq!(&img.rgb[..3], &[9, 9, 9]);
        assert_eq!(&img.rgb[(2 * 4 + 2) * 3..][..3], &[0, 0, 0]);
    }
}
