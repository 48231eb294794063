// Tests of the unpickler for TorchScript archives: pickles written here
// opcode by opcode (CPython's Lib/pickletools.py documents each), as torch's
// pickler writes a module with a parameter, and the fixtures' data.pkl.
#include "import/ts_pickle.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "import/zip_archive.h"
#include "testing/fixtures.h"

namespace torchcost::import {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// BINUNICODE: 'X', 4-byte little-endian length, UTF-8.
std::string Unicode(const std::string& s) {
  std::string out = "X";
  const uint32_t n = static_cast<uint32_t>(s.size());
  for (int k = 0; k < 4; ++k) out += static_cast<char>((n >> (8 * k)) & 0xFF);
  return out + s;
}

std::string Global(const std::string& module, const std::string& name) {
  return "c" + module + "\n" + name + "\n";
}

// class Net with training=False and w, a float tensor of sizes (2, 3) and
// strides (3, 1) at offset 0 of storage "0" (6 elements), requires_grad=True.
std::string NetPickle() {
  std::string p = "\x80\x02";
  p += Global("__torch__", "Net") + ")\x81}(";
  p += Unicode("training") + "\x89";
  // BINPUT 1.
  p += Unicode("w") + Global("torch._utils", "_rebuild_tensor_v2") + "q\x01";
  p += "((" + Unicode("storage") + Global("torch", "FloatStorage") +
       Unicode("0") + Unicode("cpu") + "K\x06tQ";
  p += std::string("K\x00", 2) + "K\x02K\x03\x86" + "K\x03K\x01\x86" + "\x88";
  p += Global("collections", "OrderedDict") + ")Rt" + "R";
  // BINGET 1: the memoized _rebuild_tensor_v2 global.
  p += Unicode("other") + "h\x01";
  p += "ub.";
  return p;
}

TEST(TsPickleTest, ReadsAModuleWithATensor) {
  Result<PickleRef> r = Unpickle(NetPickle());
  ASSERT_TRUE(r.ok()) << r.status().message();
  const PickleValue& net = **r;
  ASSERT_EQ(net.kind, PickleValue::Kind::kObject);
  EXPECT_EQ(net.s, "__torch__.Net");
  ASSERT_EQ(net.attrs.size(), 3u);
  EXPECT_EQ(net.attrs[0].first, "training");
  EXPECT_EQ(net.attrs[1].first, "w");
  const PickleValue* training = net.Attr("training");
  ASSERT_NE(training, nullptr);
  EXPECT_EQ(training->kind, PickleValue::Kind::kBool);
  EXPECT_FALSE(training->b);
  const PickleValue* w = net.Attr("w");
  ASSERT_NE(w, nullptr);
  ASSERT_EQ(w->kind, PickleValue::Kind::kTensor);
  EXPECT_EQ(w->tensor.storage_key, "0");
  EXPECT_EQ(w->tensor.scalar_type, 6);  // c10::ScalarType::Float.
  EXPECT_EQ(w->tensor.device, "cpu");
  EXPECT_EQ(w->tensor.storage_numel, 6);
  EXPECT_EQ(w->tensor.offset, 0);
  EXPECT_THAT(w->tensor.sizes, ElementsAre(2, 3));
  EXPECT_THAT(w->tensor.strides, ElementsAre(3, 1));
  EXPECT_TRUE(w->tensor.requires_grad);
  const PickleValue* other = net.Attr("other");
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->kind, PickleValue::Kind::kGlobal);
  EXPECT_EQ(other->s, "torch._utils._rebuild_tensor_v2");
  EXPECT_EQ(net.Attr("missing"), nullptr);
}

TEST(TsPickleTest, Numbers) {
  // LONG1 of 2 bytes 0xFE 0xFF is -2; BININT 0xFFFFFFFF is -1; BININT2 0x0102
  // is 258; BINFLOAT is big-endian: 0x3FF8000000000000 is 1.5.
  const std::string p =
      std::string("\x80\x02(\x8a\x02\xfe\xff", 7) + "J\xff\xff\xff\xff" +
      "M\x02\x01" + std::string("G\x3f\xf8\x00\x00\x00\x00\x00\x00", 9) + "t.";
  Result<PickleRef> r = Unpickle(p);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ((*r)->items.size(), 4u);
  EXPECT_EQ((*r)->items[0]->i, -2);
  EXPECT_EQ((*r)->items[1]->i, -1);
  EXPECT_EQ((*r)->items[2]->i, 258);
  EXPECT_EQ((*r)->items[3]->f, 1.5);
}

TEST(TsPickleTest, ListsAndDicts) {
  const std::string p = std::string(
                            "\x80\x02]q\x00(K\x01K\x02"
                            "e}(",
                            13) +
                        Unicode("a") + "Nu" + "\x86.";
  Result<PickleRef> r = Unpickle(p);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ((*r)->kind, PickleValue::Kind::kTuple);
  const PickleValue& list = *(*r)->items[0];
  ASSERT_EQ(list.kind, PickleValue::Kind::kList);
  ASSERT_EQ(list.items.size(), 2u);
  EXPECT_EQ(list.items[1]->i, 2);
  const PickleValue& dict = *(*r)->items[1];
  ASSERT_EQ(dict.kind, PickleValue::Kind::kDict);
  ASSERT_EQ(dict.items.size(), 2u);
  EXPECT_EQ(dict.items[0]->s, "a");
  EXPECT_EQ(dict.items[1]->kind, PickleValue::Kind::kNone);
}

TEST(TsPickleTest, WhatItDoesNotReadIsAnError) {
  EXPECT_THAT(Unpickle("\x80\x02\x95.").status().message(),
              HasSubstr("unsupported opcode 0x95"));
  EXPECT_THAT(
      Unpickle("\x80\x02" + Global("torch.jit._pickle", "build_intlist") +
               "(K\x01tR.")
          .status()
          .message(),
      HasSubstr("unsupported callable torch.jit._pickle.build_intlist"));
  EXPECT_THAT(Unpickle("\x80\x02N").status().message(), HasSubstr("truncated"));
  EXPECT_THAT(Unpickle("\x80\x02h\x05.").status().message(),
              HasSubstr("memo 5 read before it was written"));
  EXPECT_THAT(Unpickle("\x80\x02NN.").status().message(),
              HasSubstr("STOP with 2 values"));
}

TEST(TsPickleTest, CyclesDeepNestingAndTensorsOutsideTheirStorageAreErrors) {
  // EMPTY_LIST, BINPUT 0, BINGET 0, APPEND: a list that contains itself.
  EXPECT_THAT(Unpickle(std::string("\x80\x02]q\x00h\x00"
                                   "a.",
                                   9))
                  .status()
                  .message(),
              HasSubstr("contains itself"));
  // 2000 tuples, each holding the one before.
  std::string deep = "\x80\x02N";
  for (int i = 0; i < 2000; ++i) deep += "\x85";
  EXPECT_THAT(Unpickle(deep + ".").status().message(),
              HasSubstr("nested too deeply"));
  // 60 tuples, each holding the one before twice (the top and BINGET 0 of it,
  // TUPLE2, BINPUT 0): 2^60 paths but 61 values, read in time.
  std::string shared = std::string("\x80\x02Nq\x00", 5);
  for (int i = 0; i < 60; ++i) shared += std::string("h\x00\x86q\x00", 5);
  Result<PickleRef> wide = Unpickle(shared + ".");
  ASSERT_TRUE(wide.ok()) << wide.status().message();
  EXPECT_EQ((*wide)->items.size(), 2u);
  // NetPickle's tensor with sizes (2, 3), strides (3, 1) needs elements 0 .. 5
  // of its storage: 5 elements are too few; offset 1 with 6 elements reaches
  // element 6, one past the end.
  std::string five = NetPickle();
  const size_t numel = five.find("K\x06tQ");
  ASSERT_NE(numel, std::string::npos);
  five[numel + 1] = 5;
  EXPECT_THAT(Unpickle(five).status().message(),
              HasSubstr("does not fit its storage"));
  std::string offset = NetPickle();
  const size_t at = offset.find(std::string("K\x00", 2) + "K\x02K\x03");
  ASSERT_NE(at, std::string::npos);
  offset[at + 1] = 1;
  EXPECT_THAT(Unpickle(offset).status().message(),
              HasSubstr("does not fit its storage"));
}

TEST(TsPickleTest, StorageClasses) {
  EXPECT_EQ(ScalarTypeOfStorage("LongStorage"), 4);
  EXPECT_EQ(ScalarTypeOfStorage("HalfStorage"), 5);
  EXPECT_EQ(ScalarTypeOfStorage("BFloat16Storage"), 15);
  EXPECT_EQ(ScalarTypeOfStorage("TypedStorage"), -1);
}

TEST(TsPickleTest, ReadsTheFixturesModuleTree) {
  // tools/make_fixtures.py's Tied: embed (Embedding 16x8), proj (Linear 8->8),
  // decoder (Linear 8->16, its weight the embedding's).
  ASSERT_TRUE(testing::EnsureFixtures("tied"));
  Result<ZipArchive> zip =
      ZipArchive::OpenFile(testing::FixturePath("tied.pt"));
  ASSERT_TRUE(zip.ok()) << zip.status().message();
  Result<std::string> data = zip->Read(zip->root() + "data.pkl");
  ASSERT_TRUE(data.ok());
  Result<PickleRef> r = Unpickle(*data);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const PickleValue* embed = (*r)->Attr("embed");
  const PickleValue* decoder = (*r)->Attr("decoder");
  ASSERT_TRUE(embed != nullptr && decoder != nullptr);
  const PickleValue* ew = embed->Attr("weight");
  const PickleValue* dw = decoder->Attr("weight");
  ASSERT_TRUE(ew != nullptr && dw != nullptr);
  EXPECT_THAT(ew->tensor.sizes, ElementsAre(16, 8));
  // One storage, two names.
  EXPECT_EQ(ew->tensor.storage_key, dw->tensor.storage_key);
  const PickleValue* bias = (*r)->Attr("proj")->Attr("bias");
  ASSERT_NE(bias, nullptr);
  EXPECT_THAT(bias->tensor.sizes, ElementsAre(8));
}

}  // namespace
}  // namespace torchcost::import
