//! `col2im`: sums the columns of sliding blocks (`[N, C * kh * kw, L]`)
//! back into images (`[N, C, H, W]`), each column element added at the
//! image position its block and kernel offset name (PyTorch's `col2im`
//! loop; bool columns combine with `or`).

use aten_core::native::col2im_meta;
use aten_core::Tensor;
use c10_core::{Error, Numeric, Result, ScalarType};

use super::util::{dtype_of, write_output};
use crate::dispatch_floating;

/// The geometry of one `col2im`: `(kh, kw)`, `(dh, dw)`, `(ph, pw)`,
/// `(sh, sw)`, the image `(channels, height, width)` and the blocks
/// `(rows, columns)`.
struct Col2ImGeometry {
    kernel: (i64, i64),
    dilation: (i64, i64),
    padding: (i64, i64),
    stride: (i64, i64),
    image: (i64, i64, i64),
    blocks: (i64, i64),
}

impl Col2ImGeometry {
    /// Calls `add(image_index, column_index)` for every column element
    /// that lands inside the image, per batch element.
    fn for_each(&self, mut add: impl FnMut(usize, usize)) {
        let ((kh, kw), (dh, dw), (ph, pw), (sh, sw)) =
            (self.kernel, self.dilation, self.padding, self.stride);
        let (c, h, w) = self.image;
        let (bh, bw) = self.blocks;
        // Positions in i128: strides, paddings and dilations are any
        // positive i64.
        let wide = i128::from;
        for c_col in 0..c * kh * kw {
            let w_off = c_col % kw;
            let h_off = (c_col / kw) % kh;
            let c_im = c_col / kh / kw;
            for h_col in 0..bh {
                let h_im = wide(h_col) * wide(sh) - wide(ph) + wide(h_off) * wide(dh);
                if h_im < 0 || h_im >= wide(h) {
                    continue;
                }
                let h_im = h_im as i64;
                for w_col in 0..bw {
                    let w_im = wide(w_col) * wide(sw) - wide(pw) + wide(w_off) * wide(dw);
                    if w_im < 0 || w_im >= wide(w) {
                        continue;
                    }
                    let w_im = w_im as i64;
                    add(
                        ((c_im * h + h_im) * w + w_im) as usize,
                        ((c_col * bh + h_col) * bw + w_col) as usize,
                    );
                }
            }
        }
    }
}

/// `col2im(self, output_size, kernel_size, dilation, padding, stride)`.
pub fn col2im_cpu(
    self_: &Tensor,
    output_size: &[i64],
    kernel_size: &[i64],
    dilation: &[i64],
    padding: &[i64],
    stride: &[i64],
) -> Result<Tensor> {
    let out = col2im_meta(self_, output_size, kernel_size, dilation, padding, stride)?;
    let sizes = self_.sizes();
    let batch = if sizes.len() == 3 { sizes[0] } else { 1 } as usize;
    let pair = |v: &[i64]| (v[0], v[1]);
    let os = out.sizes();
    let image = (os[os.len() - 3], os[os.len() - 2], os[os.len() - 1]);
    // Checked by the meta kernel: the blocks are positive and tile the
    // columns exactly (so they fit an i64).
    let blocks = |o: i64, k: i64, d: i64, p: i64, s: i64| {
        let wide = i128::from;
        ((wide(o) + 2 * wide(p) - wide(d) * (wide(k) - 1) - 1) / wide(s) + 1) as i64
    };
    let g = Col2ImGeometry {
        kernel: pair(kernel_size),
        dilation: pair(dilation),
        padding: pair(padding),
        stride: pair(stride),
        image,
        blocks: (
            blocks(image.1, kernel_size[0], dilation[0], padding[0], stride[0]),
            blocks(image.2, kernel_size[1], dilation[1], padding[1], stride[1]),
        ),
    };
    let image_len = (image.0 * image.1 * image.2) as usize;
    let cols_len = (sizes[sizes.len() - 2] * sizes[sizes.len() - 1]) as usize;
    let dtype = dtype_of(self_)?;
    if dtype == ScalarType::Bool {
        let x = self_.to_vec::<bool>()?;
        if x.len() != batch * cols_len {
            return Err(Error::runtime("col2im: the input changed while it ran"));
        }
        let mut y = vec![false; batch * image_len];
        for b in 0..batch {
            let (cols, img) = (
                &x[b * cols_len..][..cols_len],
                &mut y[b * image_len..][..image_len],
            );
            g.for_each(|i, c| img[i] |= cols[c]);
        }
        write_output(&out, true, &y)?;
        return Ok(out);
    }
    dispatch_floating!(dtype, "col2im_out_cpu", T => {
        let x = self_.to_vec::<T>()?;
        if x.len() != batch * cols_len {
            return Err(Error::runtime("col2im: the input changed while it ran"));
        }
        let mut acc = vec![0f64; batch * image_len];
        for b in 0..batch {
            let (cols, img) = (&x[b * cols_len..][..cols_len], &mut acc[b * image_len..][..image_len]);
            g.for_each(|i, c| img[i] += cols[c].to_f64());
        }
        let y: Vec<T> = acc.into_iter().map(T::from_f64).collect();
        write_output(&out, true, &y)
    })?;
    Ok(out)
}
