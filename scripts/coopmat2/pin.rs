//! Nothing: this crate exists to pin the glslang source (`cargo fetch`) that spirv.sh builds.
