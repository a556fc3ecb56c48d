//! `gradcheck` and `gradgradcheck` (PyTorch's `torch.autograd.gradcheck`):
//! compares the gradients autograd computes with central finite
//! differences, in float64.
