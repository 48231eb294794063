// KeyIndex: objects of a vector found by a string member, checked against a
// brute lookup.
#include "torchcost/key_index.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace torchcost {
namespace {

struct Named {
  std::string name;
};
using NamedIndex = KeyIndex<Named, &Named::name>;

// The first position of `key` in `objects`, or -1.
int BruteFind(const std::vector<Named>& objects, const std::string& key) {
  for (size_t i = 0; i < objects.size(); ++i) {
    if (objects[i].name == key) return static_cast<int>(i);
  }
  return -1;
}

TEST(KeyIndexTest, FindsEveryKeyAcrossGrowthAndTheFirstOfDuplicates) {
  // 3,000 objects (the table doubles from 16 to 8,192 slots), then lookups of
  // each key and of keys that are absent; a duplicate key keeps the first.
  std::vector<Named> objects(3000);
  for (size_t i = 0; i < objects.size(); ++i)
    objects[i].name =
        "layers." + std::to_string(i / 10) + ".m" + std::to_string(i % 10);
  NamedIndex index;
  EXPECT_EQ(index.Find(objects, "layers.0.m0"), -1);  // Empty.
  for (size_t i = 0; i < objects.size(); ++i)
    ASSERT_TRUE(index.Insert(objects, static_cast<int>(i)));
  EXPECT_EQ(index.size(), 3000u);
  for (size_t i = 0; i < objects.size(); ++i)
    ASSERT_EQ(index.Find(objects, objects[i].name),
              BruteFind(objects, objects[i].name));
  for (const char* absent : {"layers.300.m0", "layers.1", ""})
    EXPECT_EQ(index.Find(objects, absent), -1) << absent;
  objects.push_back(objects[42]);
  EXPECT_FALSE(index.Insert(objects, 3000));
  EXPECT_EQ(index.size(), 3000u);  // Not indexed twice.
  EXPECT_EQ(index.Find(objects, objects[42].name), 42);
  // Indexed again after Clear, in reverse: the first inserted wins.
  index.Clear();
  EXPECT_EQ(index.size(), 0u);
  EXPECT_EQ(index.Find(objects, objects[42].name), -1);
  for (int i = 3000; i >= 0; --i) index.Insert(objects, i);
  EXPECT_EQ(index.Find(objects, objects[42].name), 3000);
}

TEST(KeyIndexTest, ReserveKeepsWhatIsIndexed) {
  std::vector<Named> objects = {{"a"}, {"b"}, {"c"}};
  NamedIndex index;
  index.Insert(objects, 0);
  index.Insert(objects, 2);
  index.Reserve(1000);
  EXPECT_EQ(index.Find(objects, "a"), 0);
  EXPECT_EQ(index.Find(objects, "b"), -1);
  EXPECT_EQ(index.Find(objects, "c"), 2);
  EXPECT_TRUE(index.Insert(objects, 1));
  EXPECT_EQ(index.Find(objects, "b"), 1);
  EXPECT_EQ(index.size(), 3u);
}

}  // namespace
}  // namespace torchcost
