//! The values of `DispatchKey`: one constant per entry of PyTorch 2.15's
//! `c10::DispatchKey` enum, with PyTorch's numeric values and names, plus the
//! `StartOf*`/`EndOf*` markers (which share values with real keys, as in C++).

use super::DispatchKey;

#[allow(non_upper_case_globals)]
impl DispatchKey {
    #[doc = "`DispatchKey::Undefined` (value 0)."]
    pub const Undefined: DispatchKey = DispatchKey(0);
    #[doc = "`DispatchKey::Dense` (value 1)."]
    pub const Dense: DispatchKey = DispatchKey(1);
    #[doc = "`DispatchKey::FPGA` (value 2)."]
    pub const FPGA: DispatchKey = DispatchKey(2);
    #[doc = "`DispatchKey::Vulkan` (value 3)."]
    pub const Vulkan: DispatchKey = DispatchKey(3);
    #[doc = "`DispatchKey::Metal` (value 4)."]
    pub const Metal: DispatchKey = DispatchKey(4);
    #[doc = "`DispatchKey::Quantized` (value 5)."]
    pub const Quantized: DispatchKey = DispatchKey(5);
    #[doc = "`DispatchKey::CustomRNGKeyId` (value 6)."]
    pub const CustomRNGKeyId: DispatchKey = DispatchKey(6);
    #[doc = "`DispatchKey::MkldnnCPU` (value 7)."]
    pub const MkldnnCPU: DispatchKey = DispatchKey(7);
    #[doc = "`DispatchKey::Sparse` (value 8)."]
    pub const Sparse: DispatchKey = DispatchKey(8);
    #[doc = "`DispatchKey::SparseCsr` (value 9)."]
    pub const SparseCsr: DispatchKey = DispatchKey(9);
    #[doc = "`DispatchKey::NestedTensor` (value 10)."]
    pub const NestedTensor: DispatchKey = DispatchKey(10);
    #[doc = "`DispatchKey::BackendSelect` (value 11)."]
    pub const BackendSelect: DispatchKey = DispatchKey(11);
    #[doc = "`DispatchKey::Fake` (value 12)."]
    pub const Fake: DispatchKey = DispatchKey(12);
    #[doc = "`DispatchKey::Python` (value 13)."]
    pub const Python: DispatchKey = DispatchKey(13);
    #[doc = "`DispatchKey::FuncTorchDynamicLayerBackMode` (value 14)."]
    pub const FuncTorchDynamicLayerBackMode: DispatchKey = DispatchKey(14);
    #[doc = "`DispatchKey::Functionalize` (value 15)."]
    pub const Functionalize: DispatchKey = DispatchKey(15);
    #[doc = "`DispatchKey::Conjugate` (value 16)."]
    pub const Conjugate: DispatchKey = DispatchKey(16);
    #[doc = "`DispatchKey::Negative` (value 17)."]
    pub const Negative: DispatchKey = DispatchKey(17);
    #[doc = "`DispatchKey::ZeroTensor` (value 18)."]
    pub const ZeroTensor: DispatchKey = DispatchKey(18);
    #[doc = "`DispatchKey::ADInplaceOrView` (value 19)."]
    pub const ADInplaceOrView: DispatchKey = DispatchKey(19);
    #[doc = "`DispatchKey::AutogradOther` (value 20)."]
    pub const AutogradOther: DispatchKey = DispatchKey(20);
    #[doc = "`DispatchKey::AutogradFunctionality` (value 21)."]
    pub const AutogradFunctionality: DispatchKey = DispatchKey(21);
    #[doc = "`DispatchKey::AutogradNestedTensor` (value 22)."]
    pub const AutogradNestedTensor: DispatchKey = DispatchKey(22);
    #[doc = "`DispatchKey::Tracer` (value 23)."]
    pub const Tracer: DispatchKey = DispatchKey(23);
    #[doc = "`DispatchKey::AutocastCPU` (value 24)."]
    pub const AutocastCPU: DispatchKey = DispatchKey(24);
    #[doc = "`DispatchKey::AutocastMTIA` (value 25)."]
    pub const AutocastMTIA: DispatchKey = DispatchKey(25);
    #[doc = "`DispatchKey::AutocastMAIA` (value 26)."]
    pub const AutocastMAIA: DispatchKey = DispatchKey(26);
    #[doc = "`DispatchKey::AutocastXPU` (value 27)."]
    pub const AutocastXPU: DispatchKey = DispatchKey(27);
    #[doc = "`DispatchKey::AutocastIPU` (value 28)."]
    pub const AutocastIPU: DispatchKey = DispatchKey(28);
    #[doc = "`DispatchKey::AutocastHPU` (value 29)."]
    pub const AutocastHPU: DispatchKey = DispatchKey(29);
    #[doc = "`DispatchKey::AutocastXLA` (value 30)."]
    pub const AutocastXLA: DispatchKey = DispatchKey(30);
    #[doc = "`DispatchKey::AutocastMPS` (value 31)."]
    pub const AutocastMPS: DispatchKey = DispatchKey(31);
    #[doc = "`DispatchKey::AutocastCUDA` (value 32)."]
    pub const AutocastCUDA: DispatchKey = DispatchKey(32);
    #[doc = "`DispatchKey::AutocastPrivateUse1` (value 33)."]
    pub const AutocastPrivateUse1: DispatchKey = DispatchKey(33);
    #[doc = "`DispatchKey::FuncTorchBatched` (value 34)."]
    pub const FuncTorchBatched: DispatchKey = DispatchKey(34);
    #[doc = "`DispatchKey::BatchedNestedTensor` (value 35)."]
    pub const BatchedNestedTensor: DispatchKey = DispatchKey(35);
    #[doc = "`DispatchKey::FuncTorchVmapMode` (value 36)."]
    pub const FuncTorchVmapMode: DispatchKey = DispatchKey(36);
    #[doc = "`DispatchKey::Batched` (value 37)."]
    pub const Batched: DispatchKey = DispatchKey(37);
    #[doc = "`DispatchKey::VmapMode` (value 38)."]
    pub const VmapMode: DispatchKey = DispatchKey(38);
    #[doc = "`DispatchKey::FuncTorchGradWrapper` (value 39)."]
    pub const FuncTorchGradWrapper: DispatchKey = DispatchKey(39);
    #[doc = "`DispatchKey::DeferredInit` (value 40)."]
    pub const DeferredInit: DispatchKey = DispatchKey(40);
    #[doc = "`DispatchKey::PythonTLSSnapshot` (value 41)."]
    pub const PythonTLSSnapshot: DispatchKey = DispatchKey(41);
    #[doc = "`DispatchKey::FuncTorchDynamicLayerFrontMode` (value 42)."]
    pub const FuncTorchDynamicLayerFrontMode: DispatchKey = DispatchKey(42);
    #[doc = "`DispatchKey::TESTING_ONLY_GenericWrapper` (value 43)."]
    pub const TESTING_ONLY_GenericWrapper: DispatchKey = DispatchKey(43);
    #[doc = "`DispatchKey::TESTING_ONLY_GenericMode` (value 44)."]
    pub const TESTING_ONLY_GenericMode: DispatchKey = DispatchKey(44);
    #[doc = "`DispatchKey::PreDispatch` (value 45)."]
    pub const PreDispatch: DispatchKey = DispatchKey(45);
    #[doc = "`DispatchKey::PythonDispatcher` (value 46)."]
    pub const PythonDispatcher: DispatchKey = DispatchKey(46);
    #[doc = "`DispatchKey::EndOfFunctionalityKeys` (value 47)."]
    pub const EndOfFunctionalityKeys: DispatchKey = DispatchKey(47);
    #[doc = "`DispatchKey::StartOfDenseBackends` (value 48)."]
    pub const StartOfDenseBackends: DispatchKey = DispatchKey(48);
    #[doc = "`DispatchKey::CPU` (value 49)."]
    pub const CPU: DispatchKey = DispatchKey(49);
    #[doc = "`DispatchKey::CUDA` (value 50)."]
    pub const CUDA: DispatchKey = DispatchKey(50);
    #[doc = "`DispatchKey::HIP` (value 51)."]
    pub const HIP: DispatchKey = DispatchKey(51);
    #[doc = "`DispatchKey::XLA` (value 52)."]
    pub const XLA: DispatchKey = DispatchKey(52);
    #[doc = "`DispatchKey::MPS` (value 53)."]
    pub const MPS: DispatchKey = DispatchKey(53);
    #[doc = "`DispatchKey::IPU` (value 54)."]
    pub const IPU: DispatchKey = DispatchKey(54);
    #[doc = "`DispatchKey::XPU` (value 55)."]
    pub const XPU: DispatchKey = DispatchKey(55);
    #[doc = "`DispatchKey::HPU` (value 56)."]
    pub const HPU: DispatchKey = DispatchKey(56);
    #[doc = "`DispatchKey::VE` (value 57)."]
    pub const VE: DispatchKey = DispatchKey(57);
    #[doc = "`DispatchKey::Lazy` (value 58)."]
    pub const Lazy: DispatchKey = DispatchKey(58);
    #[doc = "`DispatchKey::MTIA` (value 59)."]
    pub const MTIA: DispatchKey = DispatchKey(59);
    #[doc = "`DispatchKey::MAIA` (value 60)."]
    pub const MAIA: DispatchKey = DispatchKey(60);
    #[doc = "`DispatchKey::PrivateUse1` (value 61)."]
    pub const PrivateUse1: DispatchKey = DispatchKey(61);
    #[doc = "`DispatchKey::PrivateUse2` (value 62)."]
    pub const PrivateUse2: DispatchKey = DispatchKey(62);
    #[doc = "`DispatchKey::PrivateUse3` (value 63)."]
    pub const PrivateUse3: DispatchKey = DispatchKey(63);
    #[doc = "`DispatchKey::Meta` (value 64)."]
    pub const Meta: DispatchKey = DispatchKey(64);
    #[doc = "`DispatchKey::EndOfDenseBackends` (value 64)."]
    pub const EndOfDenseBackends: DispatchKey = DispatchKey(64);
    #[doc = "`DispatchKey::StartOfQuantizedBackends` (value 65)."]
    pub const StartOfQuantizedBackends: DispatchKey = DispatchKey(65);
    #[doc = "`DispatchKey::QuantizedCPU` (value 66)."]
    pub const QuantizedCPU: DispatchKey = DispatchKey(66);
    #[doc = "`DispatchKey::QuantizedCUDA` (value 67)."]
    pub const QuantizedCUDA: DispatchKey = DispatchKey(67);
    #[doc = "`DispatchKey::QuantizedHIP` (value 68)."]
    pub const QuantizedHIP: DispatchKey = DispatchKey(68);
    #[doc = "`DispatchKey::QuantizedXLA` (value 69)."]
    pub const QuantizedXLA: DispatchKey = DispatchKey(69);
    #[doc = "`DispatchKey::QuantizedMPS` (value 70)."]
    pub const QuantizedMPS: DispatchKey = DispatchKey(70);
    #[doc = "`DispatchKey::QuantizedIPU` (value 71)."]
    pub const QuantizedIPU: DispatchKey = DispatchKey(71);
    #[doc = "`DispatchKey::QuantizedXPU` (value 72)."]
    pub const QuantizedXPU: DispatchKey = DispatchKey(72);
    #[doc = "`DispatchKey::QuantizedHPU` (value 73)."]
    pub const QuantizedHPU: DispatchKey = DispatchKey(73);
    #[doc = "`DispatchKey::QuantizedVE` (value 74)."]
    pub const QuantizedVE: DispatchKey = DispatchKey(74);
    #[doc = "`DispatchKey::QuantizedLazy` (value 75)."]
    pub const QuantizedLazy: DispatchKey = DispatchKey(75);
    #[doc = "`DispatchKey::QuantizedMTIA` (value 76)."]
    pub const QuantizedMTIA: DispatchKey = DispatchKey(76);
    #[doc = "`DispatchKey::QuantizedMAIA` (value 77)."]
    pub const QuantizedMAIA: DispatchKey = DispatchKey(77);
    #[doc = "`DispatchKey::QuantizedPrivateUse1` (value 78)."]
    pub const QuantizedPrivateUse1: DispatchKey = DispatchKey(78);
    #[doc = "`DispatchKey::QuantizedPrivateUse2` (value 79)."]
    pub const QuantizedPrivateUse2: DispatchKey = DispatchKey(79);
    #[doc = "`DispatchKey::QuantizedPrivateUse3` (value 80)."]
    pub const QuantizedPrivateUse3: DispatchKey = DispatchKey(80);
    #[doc = "`DispatchKey::QuantizedMeta` (value 81)."]
    pub const QuantizedMeta: DispatchKey = DispatchKey(81);
    #[doc = "`DispatchKey::EndOfQuantizedBackends` (value 81)."]
    pub const EndOfQuantizedBackends: DispatchKey = DispatchKey(81);
    #[doc = "`DispatchKey::StartOfSparseBackends` (value 82)."]
    pub const StartOfSparseBackends: DispatchKey = DispatchKey(82);
    #[doc = "`DispatchKey::SparseCPU` (value 83)."]
    pub const SparseCPU: DispatchKey = DispatchKey(83);
    #[doc = "`DispatchKey::SparseCUDA` (value 84)."]
    pub const SparseCUDA: DispatchKey = DispatchKey(84);
    #[doc = "`DispatchKey::SparseHIP` (value 85)."]
    pub const SparseHIP: DispatchKey = DispatchKey(85);
    #[doc = "`DispatchKey::SparseXLA` (value 86)."]
    pub const SparseXLA: DispatchKey = DispatchKey(86);
    #[doc = "`DispatchKey::SparseMPS` (value 87)."]
    pub const SparseMPS: DispatchKey = DispatchKey(87);
    #[doc = "`DispatchKey::SparseIPU` (value 88)."]
    pub const SparseIPU: DispatchKey = DispatchKey(88);
    #[doc = "`DispatchKey::SparseXPU` (value 89)."]
    pub const SparseXPU: DispatchKey = DispatchKey(89);
    #[doc = "`DispatchKey::SparseHPU` (value 90)."]
    pub const SparseHPU: DispatchKey = DispatchKey(90);
    #[doc = "`DispatchKey::SparseVE` (value 91)."]
    pub const SparseVE: DispatchKey = DispatchKey(91);
    #[doc = "`DispatchKey::SparseLazy` (value 92)."]
    pub const SparseLazy: DispatchKey = DispatchKey(92);
    #[doc = "`DispatchKey::SparseMTIA` (value 93)."]
    pub const SparseMTIA: DispatchKey = DispatchKey(93);
    #[doc = "`DispatchKey::SparseMAIA` (value 94)."]
    pub const SparseMAIA: DispatchKey = DispatchKey(94);
    #[doc = "`DispatchKey::SparsePrivateUse1` (value 95)."]
    pub const SparsePrivateUse1: DispatchKey = DispatchKey(95);
    #[doc = "`DispatchKey::SparsePrivateUse2` (value 96)."]
    pub const SparsePrivateUse2: DispatchKey = DispatchKey(96);
    #[doc = "`DispatchKey::SparsePrivateUse3` (value 97)."]
    pub const SparsePrivateUse3: DispatchKey = DispatchKey(97);
    #[doc = "`DispatchKey::SparseMeta` (value 98)."]
    pub const SparseMeta: DispatchKey = DispatchKey(98);
    #[doc = "`DispatchKey::EndOfSparseBackends` (value 98)."]
    pub const EndOfSparseBackends: DispatchKey = DispatchKey(98);
    #[doc = "`DispatchKey::StartOfSparseCsrBackends` (value 99)."]
    pub const StartOfSparseCsrBackends: DispatchKey = DispatchKey(99);
    #[doc = "`DispatchKey::SparseCsrCPU` (value 100)."]
    pub const SparseCsrCPU: DispatchKey = DispatchKey(100);
    #[doc = "`DispatchKey::SparseCsrCUDA` (value 101)."]
    pub const SparseCsrCUDA: DispatchKey = DispatchKey(101);
    #[doc = "`DispatchKey::SparseCsrHIP` (value 102)."]
    pub const SparseCsrHIP: DispatchKey = DispatchKey(102);
    #[doc = "`DispatchKey::SparseCsrXLA` (value 103)."]
    pub const SparseCsrXLA: DispatchKey = DispatchKey(103);
    #[doc = "`DispatchKey::SparseCsrMPS` (value 104)."]
    pub const SparseCsrMPS: DispatchKey = DispatchKey(104);
    #[doc = "`DispatchKey::SparseCsrIPU` (value 105)."]
    pub const SparseCsrIPU: DispatchKey = DispatchKey(105);
    #[doc = "`DispatchKey::SparseCsrXPU` (value 106)."]
    pub const SparseCsrXPU: DispatchKey = DispatchKey(106);
    #[doc = "`DispatchKey::SparseCsrHPU` (value 107)."]
    pub const SparseCsrHPU: DispatchKey = DispatchKey(107);
    #[doc = "`DispatchKey::SparseCsrVE` (value 108)."]
    pub const SparseCsrVE: DispatchKey = DispatchKey(108);
    #[doc = "`DispatchKey::SparseCsrLazy` (value 109)."]
    pub const SparseCsrLazy: DispatchKey = DispatchKey(109);
    #[doc = "`DispatchKey::SparseCsrMTIA` (value 110)."]
    pub const SparseCsrMTIA: DispatchKey = DispatchKey(110);
    #[doc = "`DispatchKey::SparseCsrMAIA` (value 111)."]
    pub const SparseCsrMAIA: DispatchKey = DispatchKey(111);
    #[doc = "`DispatchKey::SparseCsrPrivateUse1` (value 112)."]
    pub const SparseCsrPrivateUse1: DispatchKey = DispatchKey(112);
    #[doc = "`DispatchKey::SparseCsrPrivateUse2` (value 113)."]
    pub const SparseCsrPrivateUse2: DispatchKey = DispatchKey(113);
    #[doc = "`DispatchKey::SparseCsrPrivateUse3` (value 114)."]
    pub const SparseCsrPrivateUse3: DispatchKey = DispatchKey(114);
    #[doc = "`DispatchKey::SparseCsrMeta` (value 115)."]
    pub const SparseCsrMeta: DispatchKey = DispatchKey(115);
    #[doc = "`DispatchKey::EndOfSparseCsrBackends` (value 115)."]
    pub const EndOfSparseCsrBackends: DispatchKey = DispatchKey(115);
    #[doc = "`DispatchKey::StartOfNestedTensorBackends` (value 116)."]
    pub const StartOfNestedTensorBackends: DispatchKey = DispatchKey(116);
    #[doc = "`DispatchKey::NestedTensorCPU` (value 117)."]
    pub const NestedTensorCPU: DispatchKey = DispatchKey(117);
    #[doc = "`DispatchKey::NestedTensorCUDA` (value 118)."]
    pub const NestedTensorCUDA: DispatchKey = DispatchKey(118);
    #[doc = "`DispatchKey::NestedTensorHIP` (value 119)."]
    pub const NestedTensorHIP: DispatchKey = DispatchKey(119);
    #[doc = "`DispatchKey::NestedTensorXLA` (value 120)."]
    pub const NestedTensorXLA: DispatchKey = DispatchKey(120);
    #[doc = "`DispatchKey::NestedTensorMPS` (value 121)."]
    pub const NestedTensorMPS: DispatchKey = DispatchKey(121);
    #[doc = "`DispatchKey::NestedTensorIPU` (value 122)."]
    pub const NestedTensorIPU: DispatchKey = DispatchKey(122);
    #[doc = "`DispatchKey::NestedTensorXPU` (value 123)."]
    pub const NestedTensorXPU: DispatchKey = DispatchKey(123);
    #[doc = "`DispatchKey::NestedTensorHPU` (value 124)."]
    pub const NestedTensorHPU: DispatchKey = DispatchKey(124);
    #[doc = "`DispatchKey::NestedTensorVE` (value 125)."]
    pub const NestedTensorVE: DispatchKey = DispatchKey(125);
    #[doc = "`DispatchKey::NestedTensorLazy` (value 126)."]
    pub const NestedTensorLazy: DispatchKey = DispatchKey(126);
    #[doc = "`DispatchKey::NestedTensorMTIA` (value 127)."]
    pub const NestedTensorMTIA: DispatchKey = DispatchKey(127);
    #[doc = "`DispatchKey::NestedTensorMAIA` (value 128)."]
    pub const NestedTensorMAIA: DispatchKey = DispatchKey(128);
    #[doc = "`DispatchKey::NestedTensorPrivateUse1` (value 129)."]
    pub const NestedTensorPrivateUse1: DispatchKey = DispatchKey(129);
    #[doc = "`DispatchKey::NestedTensorPrivateUse2` (value 130)."]
    pub const NestedTensorPrivateUse2: DispatchKey = DispatchKey(130);
    #[doc = "`DispatchKey::NestedTensorPrivateUse3` (value 131)."]
    pub const NestedTensorPrivateUse3: DispatchKey = DispatchKey(131);
    #[doc = "`DispatchKey::NestedTensorMeta` (value 132)."]
    pub const NestedTensorMeta: DispatchKey = DispatchKey(132);
    #[doc = "`DispatchKey::EndOfNestedTensorBackends` (value 132)."]
    pub const EndOfNestedTensorBackends: DispatchKey = DispatchKey(132);
    #[doc = "`DispatchKey::StartOfAutogradFunctionalityBackends` (value 133)."]
    pub const StartOfAutogradFunctionalityBackends: DispatchKey = DispatchKey(133);
    #[doc = "`DispatchKey::AutogradCPU` (value 134)."]
    pub const AutogradCPU: DispatchKey = DispatchKey(134);
    #[doc = "`DispatchKey::AutogradCUDA` (value 135)."]
    pub const AutogradCUDA: DispatchKey = DispatchKey(135);
    #[doc = "`DispatchKey::AutogradHIP` (value 136)."]
    pub const AutogradHIP: DispatchKey = DispatchKey(136);
    #[doc = "`DispatchKey::AutogradXLA` (value 137)."]
    pub const AutogradXLA: DispatchKey = DispatchKey(137);
    #[doc = "`DispatchKey::AutogradMPS` (value 138)."]
    pub const AutogradMPS: DispatchKey = DispatchKey(138);
    #[doc = "`DispatchKey::AutogradIPU` (value 139)."]
    pub const AutogradIPU: DispatchKey = DispatchKey(139);
    #[doc = "`DispatchKey::AutogradXPU` (value 140)."]
    pub const AutogradXPU: DispatchKey = DispatchKey(140);
    #[doc = "`DispatchKey::AutogradHPU` (value 141)."]
    pub const AutogradHPU: DispatchKey = DispatchKey(141);
    #[doc = "`DispatchKey::AutogradVE` (value 142)."]
    pub const AutogradVE: DispatchKey = DispatchKey(142);
    #[doc = "`DispatchKey::AutogradLazy` (value 143)."]
    pub const AutogradLazy: DispatchKey = DispatchKey(143);
    #[doc = "`DispatchKey::AutogradMTIA` (value 144)."]
    pub const AutogradMTIA: DispatchKey = DispatchKey(144);
    #[doc = "`DispatchKey::AutogradMAIA` (value 145)."]
    pub const AutogradMAIA: DispatchKey = DispatchKey(145);
    #[doc = "`DispatchKey::AutogradPrivateUse1` (value 146)."]
    pub const AutogradPrivateUse1: DispatchKey = DispatchKey(146);
    #[doc = "`DispatchKey::AutogradPrivateUse2` (value 147)."]
    pub const AutogradPrivateUse2: DispatchKey = DispatchKey(147);
    #[doc = "`DispatchKey::AutogradPrivateUse3` (value 148)."]
    pub const AutogradPrivateUse3: DispatchKey = DispatchKey(148);
    #[doc = "`DispatchKey::AutogradMeta` (value 149)."]
    pub const AutogradMeta: DispatchKey = DispatchKey(149);
    #[doc = "`DispatchKey::EndOfAutogradFunctionalityBackends` (value 149)."]
    pub const EndOfAutogradFunctionalityBackends: DispatchKey = DispatchKey(149);
    #[doc = "`DispatchKey::Autograd` (value 150)."]
    pub const Autograd: DispatchKey = DispatchKey(150);
    #[doc = "`DispatchKey::CompositeImplicitAutograd` (value 151)."]
    pub const CompositeImplicitAutograd: DispatchKey = DispatchKey(151);
    #[doc = "`DispatchKey::FuncTorchBatchedDecomposition` (value 152)."]
    pub const FuncTorchBatchedDecomposition: DispatchKey = DispatchKey(152);
    #[doc = "`DispatchKey::CompositeImplicitAutogradNestedTensor` (value 153)."]
    pub const CompositeImplicitAutogradNestedTensor: DispatchKey = DispatchKey(153);
    #[doc = "`DispatchKey::CompositeExplicitAutograd` (value 154)."]
    pub const CompositeExplicitAutograd: DispatchKey = DispatchKey(154);
    #[doc = "`DispatchKey::CompositeExplicitAutogradNonFunctional` (value 155)."]
    pub const CompositeExplicitAutogradNonFunctional: DispatchKey = DispatchKey(155);
    /// First per-backend runtime key (alias of `StartOfDenseBackends`).
    pub const StartOfRuntimeBackendKeys: DispatchKey = DispatchKey::StartOfDenseBackends;
    /// Last per-backend runtime key (alias of `EndOfAutogradFunctionalityBackends`).
    pub const EndOfRuntimeBackendKeys: DispatchKey =
        DispatchKey::EndOfAutogradFunctionalityBackends;
    /// First alias key.
    pub const StartOfAliasKeys: DispatchKey = DispatchKey::Autograd;
    /// Last alias key.
    pub const EndOfAliasKeys: DispatchKey = DispatchKey::CompositeExplicitAutogradNonFunctional;
    /// PyTorch's `CatchAll` spelling of `Undefined`.
    pub const CatchAll: DispatchKey = DispatchKey::Undefined;
}

/// `toString(DispatchKey)` for every value `0..=EndOfAliasKeys`, indexed by value.
pub(crate) const KEY_NAMES: [&str; 156] = [
    "Undefined",
    "Dense",
    "FPGA",
    "Vulkan",
    "Metal",
    "Quantized",
    "CustomRNGKeyId",
    "MkldnnCPU",
    "Sparse",
    "SparseCsr",
    "NestedTensor",
    "BackendSelect",
    "Fake",
    "Python",
    "FuncTorchDynamicLayerBackMode",
    "Functionalize",
    "Conjugate",
    "Negative",
    "ZeroTensor",
    "ADInplaceOrView",
    "AutogradOther",
    "AutogradFunctionality",
    "AutogradNestedTensor",
    "Tracer",
    "AutocastCPU",
    "AutocastMTIA",
    "AutocastMAIA",
    "AutocastXPU",
    "AutocastIPU",
    "AutocastHPU",
    "AutocastXLA",
    "AutocastMPS",
    "AutocastCUDA",
    "AutocastPrivateUse1",
    "FuncTorchBatched",
    "BatchedNestedTensor",
    "FuncTorchVmapMode",
    "Batched",
    "VmapMode",
    "FuncTorchGradWrapper",
    "DeferredInit",
    "PythonTLSSnapshot",
    "FuncTorchDynamicLayerFrontMode",
    "TESTING_ONLY_GenericWrapper",
    "TESTING_ONLY_GenericMode",
    "PreDispatch",
    "PythonDispatcher",
    "EndOfFunctionalityKeys",
    "Undefined",
    "CPU",
    "CUDA",
    "HIP",
    "XLA",
    "MPS",
    "IPU",
    "XPU",
    "HPU",
    "VE",
    "Lazy",
    "MTIA",
    "MAIA",
    "PrivateUse1",
    "PrivateUse2",
    "PrivateUse3",
    "Meta",
    "QuantizedUndefined",
    "QuantizedCPU",
    "QuantizedCUDA",
    "QuantizedHIP",
    "QuantizedXLA",
    "QuantizedMPS",
    "QuantizedIPU",
    "QuantizedXPU",
    "QuantizedHPU",
    "QuantizedVE",
    "QuantizedLazy",
    "QuantizedMTIA",
    "QuantizedMAIA",
    "QuantizedPrivateUse1",
    "QuantizedPrivateUse2",
    "QuantizedPrivateUse3",
    "QuantizedMeta",
    "SparseUndefined",
    "SparseCPU",
    "SparseCUDA",
    "SparseHIP",
    "SparseXLA",
    "SparseMPS",
    "SparseIPU",
    "SparseXPU",
    "SparseHPU",
    "SparseVE",
    "SparseLazy",
    "SparseMTIA",
    "SparseMAIA",
    "SparsePrivateUse1",
    "SparsePrivateUse2",
    "SparsePrivateUse3",
    "SparseMeta",
    "SparseCsrUndefined",
    "SparseCsrCPU",
    "SparseCsrCUDA",
    "SparseCsrHIP",
    "SparseCsrXLA",
    "SparseCsrMPS",
    "SparseCsrIPU",
    "SparseCsrXPU",
    "SparseCsrHPU",
    "SparseCsrVE",
    "SparseCsrLazy",
    "SparseCsrMTIA",
    "SparseCsrMAIA",
    "SparseCsrPrivateUse1",
    "SparseCsrPrivateUse2",
    "SparseCsrPrivateUse3",
    "SparseCsrMeta",
    "NestedTensorUndefined",
    "NestedTensorCPU",
    "NestedTensorCUDA",
    "NestedTensorHIP",
    "NestedTensorXLA",
    "NestedTensorMPS",
    "NestedTensorIPU",
    "NestedTensorXPU",
    "NestedTensorHPU",
    "NestedTensorVE",
    "NestedTensorLazy",
    "NestedTensorMTIA",
    "NestedTensorMAIA",
    "NestedTensorPrivateUse1",
    "NestedTensorPrivateUse2",
    "NestedTensorPrivateUse3",
    "NestedTensorMeta",
    "AutogradUndefined",
    "AutogradCPU",
    "AutogradCUDA",
    "AutogradHIP",
    "AutogradXLA",
    "AutogradMPS",
    "AutogradIPU",
    "AutogradXPU",
    "AutogradHPU",
    "AutogradVE",
    "AutogradLazy",
    "AutogradMTIA",
    "AutogradMAIA",
    "AutogradPrivateUse1",
    "AutogradPrivateUse2",
    "AutogradPrivateUse3",
    "AutogradMeta",
    "Autograd",
    "CompositeImplicitAutograd",
    "FuncTorchBatchedDecomposition",
    "CompositeImplicitAutogradNestedTensor",
    "CompositeExplicitAutograd",
    "CompositeExplicitAutogradNonFunctional",
];
