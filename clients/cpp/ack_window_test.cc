#include "clients/cpp/ack_window.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace goodput::client {
namespace {

Unacked Event(const std::string& id) {
  Unacked u;
  u.id = id;
  u.line = id + "\n";
  return u;
}

TEST(AckWindowTest, AcksTakeTheAcknowledgedLinesOnly) {
  AckWindow w(10);
  w.Add(Event("a"));
  w.Add(Event("b"));
  EXPECT_EQ(w.TakeUnsent(), "a\nb\n");
  w.Add(Event("c"));
  EXPECT_EQ(w.TakeUnsent(), "c\n");  // a and b are not written twice
  AckWindow::Progress p = w.Feed("{\"acked\":2}\n{\"ack");
  EXPECT_EQ(p.acked, 2);
  EXPECT_EQ(w.size(), 1u);
  p = w.Feed("ed\":3}\n");  // a reply split across reads
  EXPECT_EQ(p.acked, 1);
  EXPECT_EQ(w.size(), 0u);
}

TEST(AckWindowTest, RejectedLinesAreCountedApart) {
  AckWindow w(10);
  w.Add(Event("a"));
  w.Add(Event("b"));
  w.TakeUnsent();
  // Line 3 of the connection (the hello is line 1) is event line 2: "b".
  AckWindow::Progress p =
      w.Feed("{\"rejected\":{\"line\":3,\"reason\":\"x\"}}\n{\"acked\":2}\n");
  EXPECT_EQ(p.acked, 1);
  EXPECT_EQ(p.rejected, 1);
}

TEST(AckWindowTest, ANewConnectionResendsEverythingUnacked) {
  AckWindow w(10);
  w.Add(Event("a"));
  w.Add(Event("b"));
  w.TakeUnsent();
  w.Feed("{\"acked\":1}\n");
  w.Reset();
  EXPECT_EQ(w.TakeUnsent(), "b\n");
  EXPECT_EQ(w.Feed("{\"acked\":1}\n").acked, 1);  // numbered anew
  EXPECT_EQ(w.size(), 0u);
}

TEST(AckWindowTest, OverCapacityTheOldestArePushedOut) {
  AckWindow w(2);
  w.Add(Event("a"));
  w.TakeUnsent();
  w.Add(Event("b"));
  std::vector<Unacked> out = w.Add(Event("c"));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].id, "a");
  EXPECT_EQ(w.TakeUnsent(), "b\nc\n");
  // "a" was line 1: the ack for it takes nothing else.
  EXPECT_EQ(w.Feed("{\"acked\":1}\n").acked, 0);
  EXPECT_EQ(w.size(), 2u);
  EXPECT_EQ(w.TakeAll().size(), 2u);
  EXPECT_EQ(w.size(), 0u);
}

}  // namespace
}  // namespace goodput::client
