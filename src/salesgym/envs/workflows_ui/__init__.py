"""The computer-use family on the workflows family's state: its tasks done through the apps' web pages."""
