//! The binary buffer: buffer views (4-byte aligned) and the accessors over them.

use gltf_json as json;
use json::validation::{Checked::Valid, USize64};

use super::Out;

impl Out {
    /// Appends `bytes` to the buffer (4-byte aligned) as a new buffer view.
    pub(super) fn view(
        &mut self,
        bytes: &[u8],
        target: Option<json::buffer::Target>,
    ) -> json::Index<json::buffer::View> {
        self.view_filled(bytes.len(), target, |bin| bin.extend_from_slice(bytes))
    }

    /// Appends a buffer view of `len` bytes (4-byte aligned) that `fill` writes straight into
    /// the buffer (no intermediate copy of large arrays).
    fn view_filled(
        &mut self,
        len: usize,
        target: Option<json::buffer::Target>,
        fill: impl FnOnce(&mut Vec<u8>),
    ) -> json::Index<json::buffer::View> {
        self.bin.resize(self.bin.len().next_multiple_of(4), 0);
        let offset = self.bin.len();
        self.bin.reserve(len);
        fill(&mut self.bin);
        debug_assert_eq!(self.bin.len(), offset + len, "a view's fill wrote its declared length");
        let written = self.bin.len() - offset;
        json::Index::push(
            &mut self.root.buffer_views,
            json::buffer::View {
                buffer: json::Index::new(0),
                byte_length: USize64(written as u64),
                byte_offset: Some(USize64(offset as u64)),
                byte_stride: None,
                name: None,
                target: target.map(Valid),
                extensions: None,
                extras: Default::default(),
            },
        )
    }

    /// A float accessor of `N`-component elements, with min/max when asked.
    pub(super) fn floats<const N: usize>(
        &mut self,
        data: &[[f32; N]],
        type_: json::accessor::Type,
        target: Option<json::buffer::Target>,
        min_max: bool,
    ) -> json::Index<json::Accessor> {
        let view = self.view_filled(data.len() * N * 4, target, |bin| {
            for x in data.iter().flatten() {
                bin.extend_from_slice(&x.to_le_bytes());
            }
        });
        let (min, max) = if min_max {
            let mut lo = [f32::INFINITY; N];
            let mut hi = [f32::NEG_INFINITY; N];
            for v in data {
                for k in 0..N {
                    lo[k] = lo[k].min(v[k]);
                    hi[k] = hi[k].max(v[k]);
                }
            }
            (Some(json::Value::from(lo.to_vec())), Some(json::Value::from(hi.to_vec())))
        } else {
            (None, None)
        };
        self.accessor(view, data.len(), json::accessor::ComponentType::F32, type_, min, max)
    }

    /// An index accessor: u16 when every index fits below u16's primitive-restart value.
    pub(super) fn indices(
        &mut self,
        indices: &[u32],
        vertex_count: usize,
    ) -> json::Index<json::Accessor> {
        let target = Some(json::buffer::Target::ElementArrayBuffer);
        let (view, ct) = if vertex_count < usize::from(u16::MAX) {
            let view = self.view_filled(indices.len() * 2, target, |bin| {
                for &i in indices {
                    bin.extend_from_slice(&(i as u16).to_le_bytes());
                }
            });
            (view, json::accessor::ComponentType::U16)
        } else {
            let view = self.view_filled(indices.len() * 4, target, |bin| {
                for &i in indices {
                    bin.extend_from_slice(&i.to_le_bytes());
                }
            });
            (view, json::accessor::ComponentType::U32)
        };
        self.accessor(view, indices.len(), ct, json::accessor::Type::Scalar, None, None)
    }

    pub(super) fn accessor(
        &mut self,
        view: json::Index<json::buffer::View>,
        count: usize,
        ct: json::accessor::ComponentType,
        type_: json::accessor::Type,
        min: Option<json::Value>,
        max: Option<json::Value>,
    ) -> json::Index<json::Accessor> {
        json::Index::push(
            &mut self.root.accessors,
            json::Accessor {
                buffer_view: Some(view),
                byte_offset: None,
                count: USize64(count as u64),
                component_type: Valid(json::accessor::GenericComponentType(ct)),
                extensions: None,
                extras: Default::default(),
                type_: Valid(type_),
                min,
                max,
                name: None,
                normalized: false,
                sparse: None,
            },
        )
    }
}
