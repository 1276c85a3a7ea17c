//! File formats. Each module is a low-level layer (chunks, records, structs) plus a bridge to
//! and from [`crate::scene::Scene`]; formats never import each other.

#[cfg(feature = "fbx")]
pub mod fbx;
#[cfg(feature = "gltf")]
pub mod gltf;
#[cfg(feature = "obj")]
pub mod obj;
#[cfg(feature = "three_da")]
pub mod three_da;
#[cfg(feature = "three_ds")]
pub mod three_ds;
#[cfg(feature = "usd")]
pub mod usd;
